// The dashboard (/devices) without reloads: live.js re-dispatches /api/live messages as `live` events on
// document; this script updates the matching row's status badge, last seen, key values and open-alert count.
// Every value goes in through textContent, never as HTML.
(function () {
  'use strict';

  // format.js, loaded before this script.
  var formatValue = window.telemetryFormat.formatValue;
  var relativeTime = window.telemetryFormat.relativeTime;

  function refreshTimes() {
    document.querySelectorAll('time[data-field="last-seen"][datetime]').forEach(function (t) {
      t.textContent = relativeTime(t.getAttribute('datetime'));
    });
  }
  refreshTimes();
  setInterval(refreshTimes, 10000);

  function rowOf(deviceId) {
    return document.querySelector('tr[data-device-id="' + Number(deviceId) + '"]');
  }

  function setStatus(row, status) {
    var badge = row.querySelector('[data-field="status"]');
    var s = status === 'online' ? 'online' : 'offline';
    badge.className = 'badge ' + s;
    badge.textContent = s;
  }

  function setLastSeen(row, iso) {
    var t = row.querySelector('[data-field="last-seen"]');
    t.setAttribute('datetime', iso);
    t.title = iso;
    t.textContent = relativeTime(iso);
  }

  function flash(el) {
    el.classList.remove('updated');
    void el.offsetWidth; // restart the CSS animation
    el.classList.add('updated');
  }

  function addOpenAlerts(row, delta) {
    var cell = row.querySelector('[data-field="open-alerts"]');
    var n = Math.max(0, Number(cell.textContent) + delta);
    cell.textContent = String(n);
    cell.classList.toggle('has-alerts', n > 0);
    flash(cell);
    var total = document.getElementById('open-alerts-total');
    if (total) {
      var sum = 0;
      document.querySelectorAll('tr[data-device-id] [data-field="open-alerts"]').forEach(function (c) { sum += Number(c.textContent); });
      total.textContent = String(sum);
    }
  }

  document.addEventListener('live', function (e) {
    var m = e.detail;
    if (!m || m.device_id === undefined) return;
    var row = rowOf(m.device_id);
    if (!row) return;
    if (m.type === 'device') {
      setStatus(row, m.status);
      if (m.status !== 'online') return;
      setLastSeen(row, m.last_seen_at);
      Object.keys(m.latest || {}).forEach(function (name) {
        var el = row.querySelector('[data-metric="' + CSS.escape(name) + '"]');
        if (!el) return;
        var v = m.latest[name];
        // A late reading (older than the one shown) is stored but never replaces the latest value.
        if (el.dataset.at && Date.parse(v.recorded_at) < Date.parse(el.dataset.at)) return;
        el.dataset.at = v.recorded_at;
        el.textContent = formatValue(v.value, v.unit || el.dataset.unit);
        flash(el);
      });
    } else if (m.type === 'alert_opened') {
      addOpenAlerts(row, 1);
    } else if (m.type === 'alert_resolved') {
      addOpenAlerts(row, -1);
    }
  });
})();
