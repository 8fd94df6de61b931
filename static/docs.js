// The API reference at /docs: Swagger UI (swagger-ui-bundle.js, vendored,
// see THIRD_PARTY.md) over the document this instance serves. Its "Try it
// out" calls this instance: the copy given to the renderer names the page's
// own origin as its only server. OAuth's authorization flow is left out of
// the renderer's copy (it needs a registered client and a redirect page);
// an OAuth access token pasted as bearerAuth works as an ak_ token does.
(function () {
	var box = document.getElementById('docs');
	function fail(msg) {
		box.removeAttribute('aria-busy');
		var p = document.createElement('p');
		p.className = 'docs-error';
		p.setAttribute('role', 'alert');
		p.textContent = msg;
		box.replaceChildren(p);
	}
	fetch('/openapi.json', { headers: { Accept: 'application/json' } })
		.then(function (r) {
			if (!r.ok) { throw new Error('HTTP ' + r.status); }
			return r.json();
		})
		.then(function (spec) {
			spec.servers = [{ url: location.origin, description: 'This Parley instance' }];
			if (spec.components && spec.components.securitySchemes) {
				delete spec.components.securitySchemes.oauth2;
			}
			Object.keys(spec.paths || {}).forEach(function (path) {
				var item = spec.paths[path];
				Object.keys(item).forEach(function (method) {
					var op = item[method];
					if (op && Array.isArray(op.security)) {
						op.security = op.security.filter(function (req) { return !('oauth2' in req); });
					}
				});
			});
			box.removeAttribute('aria-busy');
			box.replaceChildren();
			// What Swagger UI renders without a name or out of the
			// keyboard's reach, mended as it appears: the server list and
			// the examples' lists have empty labels; a code block that
			// scrolls must take the focus to scroll by keys.
			new MutationObserver(function () {
				var s = document.getElementById('servers');
				if (s && !s.hasAttribute('aria-label')) { s.setAttribute('aria-label', 'Server the requests go to'); }
				box.querySelectorAll('select.examples-select-element:not([aria-label])').forEach(function (e) {
					e.setAttribute('aria-label', 'Example');
				});
				box.querySelectorAll('pre:not([tabindex])').forEach(function (e) {
					e.setAttribute('tabindex', '0');
				});
			}).observe(box, { childList: true, subtree: true });
			window.ui = SwaggerUIBundle({
				spec: spec,
				domNode: box,
				// Deep links would put a link inside each operation's
				// button (axe-core: nested-interactive).
				deepLinking: false,
				docExpansion: 'none',
				defaultModelsExpandDepth: -1,
				displayRequestDuration: true,
				filter: true,
				persistAuthorization: false,
				validatorUrl: null,
				// The highlighting themes' colours fail axe-core's contrast check.
				syntaxHighlight: false,
				tryItOutEnabled: false,
				layout: 'BaseLayout'
			});
		})
		.catch(function (e) {
			fail('The API description could not be loaded (' + e.message + '). Reload the page, or read /openapi.json directly.');
		});
})();
