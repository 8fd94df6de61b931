// The dashboard's test chat: the real widget (widget.js, loaded with
// data-preview naming #test-chat and data-mode="inline") talks to
// POST /admin/test-chat and keeps its test conversation in the browser's
// storage, so that it is still there after a reload. "Start over" asks the
// widget for a new conversation.
(function () {
	'use strict';
	var box = document.getElementById('test-chat');
	var reset = document.getElementById('test-chat-reset');
	var status = document.getElementById('test-chat-status');
	if (!box || !reset) { return; }
	reset.addEventListener('click', function () {
		box.dispatchEvent(new Event('parley-new-conversation'));
		status.textContent = 'New conversation started.';
		var widget = box.querySelector('parley-widget');
		var input = widget && widget.shadowRoot && widget.shadowRoot.querySelector('textarea');
		if (input) { input.focus(); }
	});
})();
