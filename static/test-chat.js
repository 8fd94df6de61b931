// The dashboard's test chat: sends the owner's messages to POST /admin/test-chat,
// shows the answer as it streams (server-sent events read from the fetch body,
// since the request is a POST), then what the bot used. Everything from the
// server or the model is put in the page as text, never as HTML.
(function () {
	'use strict';
	var root = document.getElementById('test-chat');
	if (!root) { return; }
	var log = document.getElementById('test-chat-log');
	var form = document.getElementById('test-chat-form');
	var input = document.getElementById('test-chat-message');
	var send = document.getElementById('test-chat-send');
	var reset = document.getElementById('test-chat-reset');
	var segment = document.getElementById('test-chat-segment');
	var status = document.getElementById('test-chat-status');
	var emptyNote = document.getElementById('test-chat-empty');
	var prefix = root.dataset.sessionPrefix || 'test-';
	var csrf = root.dataset.csrf || '';
	var session = newSession();
	var busy = false;

	// newSession makes a random session id in the test namespace
	// (crypto.getRandomValues works on plain http too, unlike randomUUID).
	function newSession() {
		var b = new Uint8Array(16);
		crypto.getRandomValues(b);
		return prefix + Array.prototype.map.call(b, function (x) { return ('0' + x.toString(16)).slice(-2); }).join('');
	}

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) { e.className = cls; }
		if (text !== undefined) { e.textContent = text; }
		return e;
	}

	function say(role, text) {
		if (emptyNote) { emptyNote.hidden = true; }
		var m = el('div', 'test-chat-msg ' + role);
		m.appendChild(el('div', 'test-chat-who', role === 'me' ? 'You' : 'Bot'));
		var body = el('div', 'test-chat-text', text);
		m.appendChild(body);
		log.appendChild(m);
		m.scrollIntoView({ block: 'end' });
		return { box: m, body: body };
	}

	function pretty(v) {
		if (v === undefined || v === null) { return 'nothing'; }
		try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); }
	}

	// used shows, under an answer, the knowledge entries the prompt held and
	// the tools that ran with their results.
	function used(box, done) {
		var d = el('details', 'test-chat-used');
		d.appendChild(el('summary', '', 'What the bot used'));
		var knowledge = done.knowledge || [];
		var tools = done.tools || [];
		d.appendChild(el('h3', '', 'Knowledge base entries it was given'));
		if (knowledge.length === 0) {
			d.appendChild(el('p', 'muted', 'None: the knowledge base has no entry for this segment and language.'));
		} else {
			var ul = el('ul', 'test-chat-knowledge');
			knowledge.forEach(function (k) {
				var li = el('li');
				var a = el('a', '', k.title || 'Untitled entry');
				a.href = '/admin/corpus/' + encodeURIComponent(k.id);
				li.appendChild(a);
				if (k.summarized) { li.appendChild(el('span', 'badge', 'summary only')); }
				ul.appendChild(li);
			});
			d.appendChild(ul);
		}
		d.appendChild(el('h3', '', 'Tools it ran'));
		if (tools.length === 0) {
			d.appendChild(el('p', 'muted', 'None.'));
		} else {
			var tl = el('ul', 'test-chat-tools');
			tools.forEach(function (t) {
				var li = el('li');
				li.appendChild(el('strong', 'test-chat-tool-name', t.name));
				li.appendChild(el('span', 'badge ' + (t.success ? 'status-succeeded' : 'status-failed'), t.success ? 'worked' : 'failed'));
				if (t.summary) { li.appendChild(el('div', 'test-chat-tool-summary', t.summary)); }
				var io = el('details');
				io.appendChild(el('summary', '', 'What it was asked and what it returned'));
				io.appendChild(el('div', 'muted', 'Asked'));
				io.appendChild(el('pre', 'test-chat-tool-input', pretty(t.input)));
				io.appendChild(el('div', 'muted', 'Returned'));
				io.appendChild(el('pre', 'test-chat-tool-result', pretty(t.result)));
				li.appendChild(io);
				tl.appendChild(li);
			});
			d.appendChild(tl);
		}
		box.appendChild(d);
	}

	function fail(answer, message) {
		answer.box.classList.add('error');
		answer.body.textContent = message;
		answer.body.setAttribute('role', 'alert');
	}

	function problem(res, body) {
		if (res.status === 401) { return 'You are signed out. Reload the page and sign in again.'; }
		if (res.status === 403) { return 'This page expired. Reload it and try again.'; }
		if (res.status === 429) { return (body && body.error) || 'Too many messages: wait a minute and try again.'; }
		return (body && body.error) || 'The bot could not answer (error ' + res.status + ').';
	}

	async function ask(text) {
		var answer = say('bot', '');
		answer.box.setAttribute('aria-busy', 'true');
		status.textContent = 'The bot is answering…';
		var payload = { message: text, sessionId: session };
		if (segment) { payload.segment = segment.value; }
		try {
			var res = await fetch('/admin/test-chat', {
				method: 'POST', credentials: 'same-origin',
				headers: { 'Content-Type': 'application/json', 'Accept': 'text/event-stream', 'X-CSRF-Token': csrf },
				body: JSON.stringify(payload)
			});
			var type = res.headers.get('Content-Type') || '';
			if (!res.ok || type.indexOf('text/event-stream') !== 0) {
				var body = null;
				try { body = await res.json(); } catch (e) { /* not JSON */ }
				fail(answer, problem(res, body));
				return;
			}
			var reader = res.body.getReader();
			var decoder = new TextDecoder();
			var buf = '', text = '', ended = false;
			while (!ended) {
				var chunk = await reader.read();
				if (chunk.done) { break; }
				buf += decoder.decode(chunk.value, { stream: true });
				var cut;
				while ((cut = buf.indexOf('\n\n')) >= 0) {
					var frame = buf.slice(0, cut);
					buf = buf.slice(cut + 2);
					frame.split('\n').forEach(function (line) {
						if (line.indexOf('data: ') !== 0) { return; }
						var ev = JSON.parse(line.slice(6));
						if (ev.error) {
							fail(answer, ev.error);
							ended = true;
						} else if (ev.done) {
							answer.body.textContent = ev.message || text;
							used(answer.box, ev);
							ended = true;
						} else if (typeof ev.text === 'string') {
							text += ev.text;
							answer.body.textContent = text;
						}
					});
				}
			}
			if (!ended) { fail(answer, 'The answer was cut off. Try again.'); }
		} catch (e) {
			fail(answer, 'Parley could not be reached. Check your connection and try again.');
		} finally {
			answer.box.removeAttribute('aria-busy');
			answer.box.scrollIntoView({ block: 'end' });
			status.textContent = '';
		}
	}

	form.addEventListener('submit', async function (e) {
		e.preventDefault();
		var text = input.value.trim();
		if (!text || busy) { return; }
		busy = true;
		send.disabled = true;
		say('me', text);
		input.value = '';
		await ask(text);
		busy = false;
		send.disabled = false;
		input.focus();
	});

	input.addEventListener('keydown', function (e) {
		if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
			e.preventDefault();
			form.requestSubmit();
		}
	});

	function startOver() {
		session = newSession();
		Array.prototype.slice.call(log.querySelectorAll('.test-chat-msg')).forEach(function (m) { m.remove(); });
		if (emptyNote) { emptyNote.hidden = false; }
		status.textContent = 'New conversation started.';
		input.focus();
	}
	reset.addEventListener('click', startOver);
	if (segment) { segment.addEventListener('change', startOver); }
})();
