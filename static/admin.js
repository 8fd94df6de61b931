// The dashboard's behaviour, delegated from the document so that it also
// serves what htmx swaps in; no page carries a script of its own, which lets
// the Content-Security-Policy refuse inline scripts.
(function () {
	// The navigation folds behind a Menu button on phones.
	document.addEventListener('click', function (e) {
		var b = e.target.closest('.menu-toggle');
		if (!b) { return; }
		var open = document.getElementById('sidebar').classList.toggle('open');
		b.setAttribute('aria-expanded', String(open));
	});

	// Choosing another tenant switches to it at once.
	document.addEventListener('change', function (e) {
		if (e.target.matches('select[data-submit-on-change]')) { e.target.form.submit(); }
	});

	// htmx ignores error responses by default: let it swap the fragments this
	// dashboard answers with on errors (409 and 422 for forms; 413, 429, 502
	// and 504 for "Add from URL"; a page adds others with
	// data-htmx-swap-status), and report other failed requests instead of
	// failing silently.
	var fragmentStatuses = [409, 413, 422, 429, 502, 504];
	function swapsOn(status) {
		return fragmentStatuses.indexOf(status) >= 0 || document.querySelector('[data-htmx-swap-status="' + status + '"]') !== null;
	}
	document.addEventListener('htmx:beforeSwap', function (e) {
		if (swapsOn(e.detail.xhr.status)) { e.detail.shouldSwap = true; e.detail.isError = false; }
	});
	document.addEventListener('htmx:responseError', function (e) {
		var s = e.detail.xhr.status;
		var box = document.getElementById('htmx-error');
		if (swapsOn(s) || !box) { return; }
		box.textContent = 'The request failed (HTTP ' + s + '). Reload the page and try again.';
		box.hidden = false;
	});

	// Repeatable rows: a button with data-add-row="ID" appends the
	// <template id="ID-template"> numbered after the rows of tbody ID;
	// data-remove-row removes its row ([data-row]).
	function addRow(id) {
		var body = document.getElementById(id);
		var i = Number(body.dataset.next);
		body.dataset.next = i + 1;
		body.insertAdjacentHTML('beforeend', document.getElementById(id + '-template').innerHTML.split('__i__').join(String(i)));
		return body.lastElementChild;
	}
	document.addEventListener('click', function (e) {
		var add = e.target.closest('[data-add-row]');
		if (add) {
			var row = addRow(add.dataset.addRow);
			// A preset (a segment's lead capture: name, email, phone) fills the
			// row in and, when neither way of collecting is on, turns both on:
			// the assistant asks, and the widget shows the form.
			var label = row.querySelector('[name$=".label"]');
			if (add.dataset.presetLabel && label) {
				label.value = add.dataset.presetLabel;
				row.querySelector('[name$=".type"]').value = add.dataset.presetType;
				row.querySelector('[name$=".required"]').checked = add.dataset.presetRequired === 'true';
				var widget = document.getElementById('formEnabled'), chat = document.getElementById('askInChat');
				if (widget && chat && !widget.checked && !chat.checked) {
					widget.checked = true;
					chat.checked = true;
					widget.dispatchEvent(new Event('change', { bubbles: true }));
				}
				label.dispatchEvent(new Event('input', { bubbles: true }));
			}
			var first = label || row.querySelector('input, select, textarea');
			if (first) { first.focus(); }
			return;
		}
		var rm = e.target.closest('[data-remove-row]');
		if (rm) {
			var form = rm.closest('form');
			rm.closest('[data-row]').remove();
			if (form) { form.dispatchEvent(new Event('input', { bubbles: true })); }
		}
	});

	// Character counters: a textarea with data-max and an element
	// id="ID-count" shows how many characters it holds, red past the limit.
	document.addEventListener('input', function (e) {
		var el = e.target;
		if (!el.dataset || !el.dataset.max) { return; }
		var out = document.getElementById(el.id + '-count');
		if (!out) { return; }
		var n = Array.from(el.value).length;
		out.textContent = String(n);
		out.parentElement.classList.toggle('over', n > Number(el.dataset.max));
	});

	// Buttons with data-copy="ID" copy the text of the element ID, or select
	// it where the clipboard is unavailable (plain http, older browsers).
	document.addEventListener('click', function (e) {
		var b = e.target.closest('[data-copy]');
		if (!b) { return; }
		var el = document.getElementById(b.dataset.copy);
		if (!el) { return; }
		var select = function () {
			var r = document.createRange();
			r.selectNodeContents(el);
			var s = window.getSelection();
			s.removeAllRanges();
			s.addRange(r);
			b.textContent = 'Selected: press Ctrl+C';
		};
		if (!navigator.clipboard) { select(); return; }
		navigator.clipboard.writeText(el.textContent).then(function () { b.textContent = 'Copied'; }, select);
	});
	// The reply box of a conversation: Enter sends, Shift+Enter starts a new
	// line (as in the test chat); after a reply the new, empty box has the focus.
	document.addEventListener('keydown', function (e) {
		var el = e.target;
		if (e.key !== 'Enter' || e.shiftKey || e.isComposing || !el.matches || !el.matches('textarea[data-enter-sends]')) { return; }
		e.preventDefault();
		el.form.requestSubmit();
	});
	document.addEventListener('htmx:load', function (e) {
		var el = e.detail.elt;
		if (el && el.id === 'reply-form') {
			var box = el.querySelector('textarea');
			if (box) { box.focus(); }
		}
		if (el && el.id === 'nav-waiting') { waitingChanged(el); }
	});

	// The number of conversations waiting for a person goes into the
	// window's title; a conversation newly waiting is notified when the
	// owner allowed it (one notification across the dashboard's tabs: the
	// latest escalation seen is kept in localStorage).
	var seenKey = 'parley.latestEscalation';
	function waitingChanged(el) {
		var n = Number(el.dataset.waiting || 0);
		var root = document.documentElement;
		if (root.dataset.baseTitle === undefined) { root.dataset.baseTitle = document.title; }
		document.title = (n > 0 ? '(' + n + ') ' : '') + root.dataset.baseTitle;
		var latest = Number(el.dataset.latest || 0);
		var seen;
		try {
			seen = localStorage.getItem(seenKey);
			if (seen !== null && latest <= Number(seen)) { return; }
			localStorage.setItem(seenKey, String(latest));
		} catch (err) { return; }
		// the first page ever opened only learns where things stand
		if (seen === null || !('Notification' in window) || Notification.permission !== 'granted') { return; }
		var note = new Notification('A visitor asks for a person', {
			body: n === 1 ? '1 conversation is waiting for a person.' : n + ' conversations are waiting for a person.',
			tag: 'parley-waiting'
		});
		note.onclick = function () { window.focus(); location.href = '/admin/conversations'; };
	}

	// "Notify me when a visitor asks for a person": the button asks the
	// browser's permission; the status beside it says what was decided.
	function showNotifyState() {
		var b = document.getElementById('notify-me');
		var out = document.getElementById('notify-status');
		if (!b || !out) { return; }
		if (!('Notification' in window)) { out.textContent = 'This browser cannot show notifications.'; return; }
		b.hidden = Notification.permission !== 'default';
		if (Notification.permission === 'granted') {
			out.textContent = 'You are notified when a visitor asks for a person, while the dashboard is open.';
		} else if (Notification.permission === 'denied') {
			out.textContent = 'Notifications are blocked for this site in the browser\'s settings.';
		}
	}
	document.addEventListener('DOMContentLoaded', showNotifyState);
	document.addEventListener('click', function (e) {
		if (!e.target.closest('#notify-me') || !('Notification' in window)) { return; }
		Notification.requestPermission().then(showNotifyState);
	});

	// While a person types in the reply box of a conversation they hold, the
	// visitor's widget shows it: the page tells the server at most every 3
	// seconds (the server keeps a signal 5 seconds). A sent reply lets the
	// next keystroke tell again at once.
	var typedAt = 0;
	document.addEventListener('input', function (e) {
		var box = e.target;
		if (!box.matches('textarea[data-typing]') || !box.value.trim() || !document.querySelector('#conversation-live[data-mine]')) { return; }
		var now = Date.now();
		if (now - typedAt < 3000) { return; }
		typedAt = now;
		var csrf = box.form && box.form.querySelector('input[name="_csrf"]');
		fetch(box.dataset.typing, {
			method: 'POST', credentials: 'same-origin',
			headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-CSRF-Token': csrf ? csrf.value : '' },
			body: '_csrf=' + encodeURIComponent(csrf ? csrf.value : '')
		}).catch(function () { /* a lost signal only hides the line sooner */ });
	});
	document.addEventListener('submit', function (e) {
		if (e.target.querySelector('textarea[data-typing]')) { typedAt = 0; }
	});
})();
