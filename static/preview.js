// The dashboard's live preview: the widget beside the Persona & widget
// settings and the segment editor, redrawn from the form's unsaved values
// as the owner types. The widget script (loaded with data-preview) draws
// from the box's data-settings each time the box gets a "parley-preview"
// event.
(function () {
	var box = document.getElementById('widget-preview');
	var form = box && document.getElementById(box.dataset.form);
	if (!form) { return; }
	var saved = JSON.parse(box.dataset.settings);
	var hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;
	var field = function (name) { return form.elements.namedItem(name); };
	var text = function (name) { var f = field(name); return f ? f.value.trim() : undefined; };
	var checked = function (name) { var f = field(name); return f ? f.checked : undefined; };
	var orNull = function (v) { return v ? v : null; };

	function settings() {
		var s = JSON.parse(JSON.stringify(saved));
		var v;
		if ((v = text('name')) !== undefined && field('botName')) { s.name = v || s.name; }
		if ((v = text('botName')) !== undefined) { s.bot.name = orNull(v); }
		if ((v = text('botTitle')) !== undefined) { s.bot.title = orNull(v); }
		if ((v = text('primaryColor')) !== undefined && hex.test(v)) { s.bot.primaryColor = v; }
		if ((v = text('secondaryColor')) !== undefined) { s.bot.secondaryColor = hex.test(v) ? v : null; }
		if ((v = text('botAvatar')) !== undefined) { s.bot.avatar = orNull(v); }
		if ((v = checked('showAiBadge')) !== undefined) { s.bot.showAiBadge = v; }
		if ((v = text('teaserText')) !== undefined) { s.launcher.teaserText = orNull(v); }
		if ((v = checked('bubblePulse')) !== undefined) { s.launcher.bubblePulse = v; }
		if ((v = text('welcomeMessage')) !== undefined) { s.segment.welcomeMessage = orNull(v); }
		if (field('starters.0.text')) {
			s.segment.conversationStarters = [];
			for (var i = 0; field('starters.' + i + '.text'); i++) {
				var t = text('starters.' + i + '.text');
				if (t) { s.segment.conversationStarters.push({ text: t, emoji: text('starters.' + i + '.emoji') || undefined }); }
			}
		}
		if (field('formEnabled')) {
			var fields = [];
			form.querySelectorAll('#form-fields tbody tr').forEach(function (row) {
				var name = row.querySelector('[name$=".name"]').value.trim();
				var label = row.querySelector('[name$=".label"]').value.trim();
				if (label) { // a name left empty is made from the label when saved
					fields.push({ name: name || label, label: label, type: row.querySelector('[name$=".type"]').value,
						required: row.querySelector('[name$=".required"]').checked });
				}
			});
			s.form = checked('formEnabled') && fields.length ? { fields: fields, confirmationMessage: text('formConfirmation') } : null;
		}
		return s;
	}

	function redraw() {
		box.dataset.settings = JSON.stringify(settings());
		box.dispatchEvent(new Event('parley-preview'));
	}
	form.addEventListener('input', redraw);
	form.addEventListener('change', redraw);
	// Rows added or removed change the form without an input event.
	new MutationObserver(redraw).observe(form, { childList: true, subtree: true });
	redraw();
})();
