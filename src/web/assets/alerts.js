// The alerts page, live: an alert opened while the page is open appears at the top of the list (its row is
// rendered by the server, GET /alerts/:id/row, with the CSRF-protected buttons), and a resolved one is
// redrawn as resolved. Only alerts whose status the current filter shows are added.
(function () {
  'use strict';
  var table = document.getElementById('alerts');
  if (!table) return;
  var tbody = table.tBodies[0];
  var filter = table.dataset.filter || 'unresolved';
  var statuses = (table.dataset.statuses || '').split(' ');
  var empty = document.getElementById('no-alerts');

  function rowOf(id) { return tbody.querySelector('tr[data-alert-id="' + Number(id) + '"]'); }

  function fetchRow(id) {
    var url = '/alerts/' + Number(id) + '/row?back=' + encodeURIComponent(filter);
    return fetch(url, { credentials: 'same-origin', headers: { Accept: 'text/html' } }).then(function (r) {
      if (!r.ok) throw new Error('GET ' + url + ' answered ' + r.status);
      return r.text();
    }).then(function (text) {
      var t = document.createElement('template');
      t.innerHTML = text.trim();
      return t.content.firstElementChild;
    });
  }

  /** Without the server's row (a network error), at least the status cell says resolved. */
  function markResolved(row) {
    row.dataset.status = 'resolved';
    row.className = 'alert-resolved';
    var cell = row.querySelector('.alert-status');
    if (cell) cell.textContent = 'resolved';
    var actions = row.querySelector('.actions');
    if (actions) actions.textContent = '';
  }

  document.addEventListener('live', function (e) {
    var m = e.detail;
    if (m.type === 'alert_opened') {
      if (statuses.indexOf('open') < 0 || rowOf(m.alert_id)) return;
      fetchRow(m.alert_id).then(function (row) {
        if (!row || rowOf(m.alert_id)) return;
        row.classList.add('alert-new');
        tbody.insertBefore(row, tbody.firstChild);
        if (empty) empty.hidden = true;
      }, function () { /* the next reload shows it */ });
    } else if (m.type === 'alert_resolved') {
      var row = rowOf(m.alert_id);
      if (!row) return;
      fetchRow(m.alert_id).then(function (fresh) {
        if (fresh && row.parentNode) row.parentNode.replaceChild(fresh, row);
      }, function () { markResolved(row); });
    }
  });
})();
