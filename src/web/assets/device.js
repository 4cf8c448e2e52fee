// The device pages: copy buttons of the one-time token page, and on the detail page the uPlot charts (from the
// #chart-data JSON block) plus live updates from live.js's `live` events: latest values, status, new chart
// points and newly opened alerts. Values go in through textContent only. Each chart's figure gets
// data-points (its point count) after every draw, for people debugging and for the browser tests.
(function () {
  'use strict';

  // format.js, loaded before this script.
  var formatValue = window.telemetryFormat.formatValue;
  var relativeTime = window.telemetryFormat.relativeTime;
  var utc = window.telemetryFormat.utc;

  // Copy buttons: the clipboard API where the browser allows it, else the text is selected for Ctrl+C.
  document.querySelectorAll('button.copy[data-copy]').forEach(function (button) {
    button.addEventListener('click', function () {
      var source = document.getElementById(button.dataset.copy);
      var text = source.textContent;
      var done = function () { button.textContent = 'Copied'; };
      var select = function () {
        var range = document.createRange();
        range.selectNodeContents(source);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        button.textContent = 'Selected: press Ctrl+C';
      };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, select);
      else select();
    });
  });

  var page = document.getElementById('device');
  if (!page) return;
  var deviceId = Number(page.dataset.deviceId);

  function refreshTimes() {
    document.querySelectorAll('time[data-field="last-seen"][datetime]').forEach(function (t) {
      t.textContent = relativeTime(t.getAttribute('datetime'));
    });
  }
  setInterval(refreshTimes, 10000);

  // Charts: one uPlot per metric; x in epoch seconds.
  var charts = {};
  var block = document.getElementById('chart-data');
  var chartData = block ? JSON.parse(block.textContent) : { series: [] };

  function chartWidth(el) { return Math.max(280, el.clientWidth || 600); }

  function drawn(chart) {
    chart.figure.dataset.points = String(chart.data[0].length);
  }

  chartData.series.forEach(function (s) {
    var figure = document.querySelector('figure.chart[data-metric="' + CSS.escape(s.name) + '"]');
    if (!figure) return;
    var plot = figure.querySelector('.plot');
    var data = [s.t.slice(), s.avg.slice()];
    var opts = {
      width: chartWidth(plot),
      height: 200,
      legend: { show: false },
      scales: { x: { time: true } },
      series: [{}, { label: s.name, stroke: '#2a6fdb', width: 2, fill: 'rgba(42,111,219,0.08)', points: { show: data[0].length < 60 } }],
      axes: [{}, { size: 60 }],
    };
    var chart = { figure: figure, data: data, plot: new uPlot(opts, data, plot) };
    charts[s.name] = chart;
    drawn(chart);
  });

  window.addEventListener('resize', function () {
    Object.keys(charts).forEach(function (k) {
      var c = charts[k];
      c.plot.setSize({ width: chartWidth(c.figure.querySelector('.plot')), height: 200 });
    });
  });

  /** A reading arriving live: inserted in time order (a late reading may be older than the last point). */
  function appendPoint(name, tSec, value) {
    var c = charts[name];
    if (!c) return;
    var ts = c.data[0];
    var i = ts.length;
    while (i > 0 && ts[i - 1] > tSec) i--;
    ts.splice(i, 0, tSec);
    c.data[1].splice(i, 0, value);
    c.plot.setData(c.data);
    drawn(c);
  }

  function setLatest(name, v) {
    var tbody = document.querySelector('#latest tbody');
    var row = tbody.querySelector('tr[data-metric="' + CSS.escape(name) + '"]');
    if (!row) {
      row = document.createElement('tr');
      row.dataset.metric = name;
      ['name', 'metric-value', 'at'].forEach(function (cls) {
        var td = document.createElement('td');
        if (cls === 'metric-value') td.className = cls;
        row.appendChild(td);
      });
      row.cells[0].textContent = name;
      row.cells[2].appendChild(document.createElement('time'));
      tbody.appendChild(row);
      var none = document.getElementById('no-latest');
      if (none) none.remove();
    }
    var t = row.cells[2].querySelector('time');
    // A late reading (older than the one shown) goes into its chart, but never replaces the latest value.
    if (t.getAttribute('datetime') && Date.parse(v.recorded_at) < Date.parse(t.getAttribute('datetime'))) return;
    row.cells[1].textContent = formatValue(v.value, v.unit || row.dataset.unit);
    t.setAttribute('datetime', v.recorded_at);
    t.textContent = utc(v.recorded_at);
    row.classList.remove('updated');
    void row.offsetWidth; // restart the CSS animation
    row.classList.add('updated');
  }

  function setStatus(status) {
    var badge = document.querySelector('.summary [data-field="status"]');
    var s = status === 'online' ? 'online' : 'offline';
    badge.className = 'badge ' + s;
    badge.textContent = s;
  }

  function addOpenAlerts(delta) {
    var el = document.querySelector('.summary [data-field="open-alerts"]');
    el.textContent = String(Math.max(0, Number(el.textContent) + delta));
  }

  function addAlert(m) {
    var tbody = document.querySelector('#alerts tbody');
    var row = document.createElement('tr');
    row.dataset.alertId = String(m.alert_id);
    var time = document.createElement('time');
    time.setAttribute('datetime', m.at);
    time.textContent = utc(new Date(m.at).toISOString());
    var badge = document.createElement('span');
    badge.className = 'badge ' + String(m.severity).replace(/[^a-z]/g, '');
    badge.textContent = m.severity;
    [time, m.metric_name, formatValue(m.value, null), badge, 'open'].forEach(function (content, i) {
      var td = document.createElement('td');
      if (typeof content === 'string') td.textContent = content; else td.appendChild(content);
      if (i === 4) td.dataset.field = 'alert-status';
      row.appendChild(td);
    });
    row.classList.add('updated');
    tbody.insertBefore(row, tbody.firstChild);
    var none = document.getElementById('no-alerts');
    if (none) none.remove();
  }

  document.addEventListener('live', function (e) {
    var m = e.detail;
    if (!m || Number(m.device_id) !== deviceId) return;
    if (m.type === 'device') {
      setStatus(m.status);
      if (m.status !== 'online') return;
      var seen = document.querySelector('.summary [data-field="last-seen"]');
      seen.setAttribute('datetime', m.last_seen_at);
      seen.title = m.last_seen_at;
      seen.textContent = relativeTime(m.last_seen_at);
      Object.keys(m.latest || {}).forEach(function (name) {
        var v = m.latest[name];
        setLatest(name, v);
        appendPoint(name, Date.parse(v.recorded_at) / 1000, v.value);
      });
    } else if (m.type === 'alert_opened') {
      addAlert(m);
      addOpenAlerts(1);
    } else if (m.type === 'alert_resolved') {
      var row = document.querySelector('#alerts tr[data-alert-id="' + Number(m.alert_id) + '"] [data-field="alert-status"]');
      if (row) row.textContent = 'resolved (' + utc(new Date(m.at).toISOString()) + ')';
      addOpenAlerts(-1);
    }
  });
})();
