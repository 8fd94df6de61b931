// On narrow screens the dashboard's tables show each row as a card whose
// cells carry their column's heading (see "table.stack" in admin.css). This
// gives every cell that heading as data-label, again after htmx swaps in
// new rows.
(function () {
	function label() {
		document.querySelectorAll('main table').forEach(function (table) {
			var heads = Array.prototype.map.call(table.querySelectorAll('thead th'), function (th) { return th.textContent.trim(); });
			if (!heads.length) { return; }
			table.classList.add('stack');
			table.querySelectorAll('tbody tr').forEach(function (tr) {
				Array.prototype.forEach.call(tr.children, function (td, i) {
					if (!td.hasAttribute('data-label')) { td.setAttribute('data-label', heads[i] || ''); }
				});
			});
		});
	}
	document.addEventListener('DOMContentLoaded', label);
	document.addEventListener('htmx:afterSettle', label);
})();
