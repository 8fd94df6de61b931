// Buttons with data-copy="ID" copy the text of the element ID, or select it
// where the clipboard is unavailable (plain http, older browsers).
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
