// Status selects of the submissions pages (select.status-select in a form
// with hx-trigger="status-commit") save only a deliberate choice. A choice made
// with the pointer, or in the open list, saves at once. Arrow keys, Home, End
// and typed letters on the closed select only browse: the choice waits, marked
// unsaved, until Enter or leaving the field saves it (Escape puts the saved
// status back). Without this, every arrow press would save and send a webhook.
(function () {
  var BROWSE = ['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown'];
  function statusSelect(e) {
    return e.target && e.target.closest ? e.target.closest('select.status-select') : null;
  }
  function settle(s) {
    delete s.form.dataset.pending;
    delete s.dataset.keyed;
  }
  function commit(s) {
    var changed = s.value !== s.dataset.saved;
    settle(s);
    if (changed) { s.form.dispatchEvent(new Event('status-commit')); }
  }
  document.addEventListener('keydown', function (e) {
    var s = statusSelect(e);
    if (!s) { return; }
    if (e.key === 'Enter' && s.form.dataset.pending) { e.preventDefault(); commit(s); return; }
    if (e.key === 'Escape' && s.form.dataset.pending) { s.value = s.dataset.saved; settle(s); return; }
    if (!e.altKey && !e.ctrlKey && !e.metaKey && (BROWSE.indexOf(e.key) >= 0 || (e.key.length === 1 && e.key !== ' '))) {
      s.dataset.keyed = '1';
    }
  }, true);
  document.addEventListener('pointerdown', function (e) {
    var s = statusSelect(e);
    if (s) { delete s.dataset.keyed; }
  }, true);
  document.addEventListener('change', function (e) {
    var s = statusSelect(e);
    if (!s) { return; }
    if (s.dataset.keyed) {
      delete s.dataset.keyed;
      if (s.value === s.dataset.saved) { settle(s); } else { s.form.dataset.pending = '1'; }
      return;
    }
    commit(s);
  }, true);
  document.addEventListener('focusout', function (e) {
    var s = statusSelect(e);
    if (s && s.form.dataset.pending) { commit(s); }
  }, true);
})();
