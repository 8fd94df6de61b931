// Forms that help: each field's hint and error are tied to it for screen
// readers; after a rejected save the first field in error takes the focus;
// forms marked data-unsaved warn before their changes are left behind;
// forms with data-confirm ask first; and a success message goes once the
// page changes in place.
(function () {
	function describe() {
		document.querySelectorAll('main .field, main .check').forEach(function (box, n) {
			var control = box.querySelector('input[id]:not([type=hidden]):not([type=color]), select, textarea');
			if (!control) { return; }
			var ids = [];
			box.querySelectorAll('.hint, .field-error').forEach(function (note, i) {
				if (!note.id) { note.id = 'note-' + n + '-' + i; }
				ids.push(note.id);
			});
			if (ids.length) { control.setAttribute('aria-describedby', ids.join(' ')); }
		});
	}

	function focusFirstError() {
		var bad = document.querySelector('main [aria-invalid="true"]');
		var msg = document.querySelector('main .field-error');
		var target = bad || msg;
		if (!target) { return; }
		if (!bad) { target.setAttribute('tabindex', '-1'); }
		target.scrollIntoView({ block: 'center' });
		target.focus({ preventScroll: true });
	}

	var dirty = null;
	document.addEventListener('input', function (e) {
		var f = e.target.form || e.target.closest('form');
		if (f && f.hasAttribute('data-unsaved')) { dirty = f; }
	});
	document.addEventListener('change', function (e) {
		var f = e.target.form || e.target.closest('form');
		if (f && f.hasAttribute('data-unsaved')) { dirty = f; }
	});
	// problem says, in words, what is wrong with a control's value before
	// the form is sent: empty when required, past its limits (maxlength,
	// min, max; data-max for the character counters), or not an email
	// address; "" when nothing is. Addresses typed without https:// are
	// left to the server, which completes them.
	function problem(control) {
		var v = control.value;
		var chars = Array.from(v).length;
		if (control.required && v.trim() === '') { return 'Fill this in: it is required.'; }
		if (v === '') { return ''; }
		var max = Number(control.getAttribute('maxlength') || control.dataset.max || 0);
		if (max > 0 && chars > max) {
			return 'At most ' + max.toLocaleString('en') + ' characters: this has ' + chars.toLocaleString('en') + '.';
		}
		if (control.type === 'number') {
			var n = Number(v);
			var lo = control.getAttribute('min'), hi = control.getAttribute('max');
			if (control.validity.badInput || isNaN(n)) { return 'Enter a number.'; }
			if ((lo !== null && n < Number(lo)) || (hi !== null && n > Number(hi))) {
				if (lo !== null && hi !== null) { return 'Use a number from ' + lo + ' to ' + hi + '.'; }
				return lo !== null ? 'Use a number of at least ' + lo + '.' : 'Use a number of at most ' + hi + '.';
			}
		}
		if (control.type === 'email' && control.validity.typeMismatch) { return 'Enter an email address, like name@example.com.'; }
		return '';
	}
	// invalid marks each control of the form with a problem, next to it,
	// clears the marks of those fixed, and reports whether there was one:
	// checked before the form is sent, so a limit is met before a round trip.
	function invalid(f) {
		var first = null;
		f.querySelectorAll('input:not([type=hidden]):not([type=checkbox]):not([type=radio]):not([type=file]), textarea, select').forEach(function (control) {
			if (control.disabled || control.closest('template')) { return; }
			var box = control.closest('.field') || control.parentNode;
			var note = box.querySelector('.field-error.check-note');
			var msg = problem(control);
			if (!msg) {
				if (note) { note.remove(); control.setAttribute('aria-invalid', 'false'); }
				return;
			}
			if (!note) {
				note = document.createElement('p');
				note.className = 'field-error check-note';
				note.id = 'check-' + (control.id || control.name).replace(/[^A-Za-z0-9_-]/g, '-');
				box.appendChild(note);
				control.setAttribute('aria-describedby', ((control.getAttribute('aria-describedby') || '') + ' ' + note.id).trim());
			}
			note.textContent = msg;
			control.setAttribute('aria-invalid', 'true');
			first = first || control;
		});
		if (first) {
			first.scrollIntoView({ block: 'center' });
			first.focus({ preventScroll: true });
		}
		return first !== null;
	}
	document.addEventListener('submit', function (e) {
		var f = e.target;
		if (f.hasAttribute('data-unsaved') && invalid(f)) {
			e.preventDefault();
			return;
		}
		if (f.dataset.confirm && !window.confirm(f.dataset.confirm)) {
			e.preventDefault();
			return;
		}
		if (f === dirty) { dirty = null; }
	});
	window.addEventListener('beforeunload', function (e) {
		if (dirty) { e.preventDefault(); e.returnValue = ''; }
	});
	// (not for the background polls of open pages, data-poll)
	document.addEventListener('htmx:beforeRequest', function (e) {
		if (e.target.closest && e.target.closest('[data-poll]')) { return; }
		document.querySelectorAll('main > .flash.ok').forEach(function (el) { el.remove(); });
	});
	// A poll waits while a form in the part it refreshes is open
	// (data-holds-poll: "Improve this answer"), so that nothing typed is lost.
	document.addEventListener('htmx:beforeRequest', function (e) {
		if (e.target.matches && e.target.matches('[data-poll]') && e.target.querySelector('[data-holds-poll]')) { e.preventDefault(); }
	});
	document.addEventListener('htmx:afterSettle', describe);
	document.addEventListener('DOMContentLoaded', function () { describe(); focusFirstError(); });
})();

// Colour fields: a picker beside the text box, kept in step with it; a
// colour typed by name ("green") or in another CSS form becomes #RRGGBB.
(function () {
	function toHex(v) {
		v = v.trim();
		if (/^#[0-9a-f]{6}$/i.test(v)) { return v.toUpperCase(); }
		if (!v) { return ''; }
		var c = document.createElement('canvas').getContext('2d');
		c.fillStyle = '#010203';
		c.fillStyle = v;
		var out = c.fillStyle;
		if (out === '#010203' || !/^#[0-9a-f]{6}$/i.test(out)) { return ''; }
		return out.toUpperCase();
	}
	document.addEventListener('input', function (e) {
		var picker = e.target;
		if (!picker.dataset || !picker.dataset.colourFor) { return; }
		var box = document.getElementById(picker.dataset.colourFor);
		box.value = picker.value.toUpperCase();
		box.dispatchEvent(new Event('input', { bubbles: true }));
	});
	document.addEventListener('change', function (e) {
		var box = e.target;
		if (!box.id) { return; }
		var picker = document.querySelector('[data-colour-for="' + box.id + '"]');
		if (!picker) { return; }
		var hex = toHex(box.value);
		if (hex && hex !== box.value) {
			box.value = hex;
			box.dispatchEvent(new Event('input', { bubbles: true }));
		}
		if (hex) { picker.value = hex.toLowerCase(); }
	});
})();
