// Value and time formatting shared by the page scripts (dashboard.js, device.js), by the same rules as
// src/web/key-metrics.ts on the server, so a live update reads exactly like the server-rendered value.
(function () {
  'use strict';
  window.telemetryFormat = {
    formatValue: function (value, unit) {
      var v = Number.isInteger(value) ? String(value) : String(Number(value.toFixed(3)));
      return unit ? v + ' ' + unit : v;
    },
    relativeTime: function (iso) {
      var s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
      if (s < 60) return s + ' s ago';
      if (s < 3600) return Math.floor(s / 60) + ' min ago';
      if (s < 86400) return Math.floor(s / 3600) + ' h ago';
      return Math.floor(s / 86400) + ' d ago';
    },
    utc: function (iso) { return iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'); },
  };
})();
