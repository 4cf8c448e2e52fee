// The pages' one WebSocket to /api/live (the session cookie authenticates it). Each message is re-dispatched
// on `document` as a `live` CustomEvent whose detail is the parsed message, so page scripts only listen:
//   document.addEventListener('live', (e) => { if (e.detail.type === 'alert_opened') ... });
// The socket reconnects with backoff; `document.documentElement.dataset.live` is 'open' while connected
// (the browser tests wait for it).
(function () {
  'use strict';
  var delayMs = 500;
  function connect() {
    var scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    var ws = new WebSocket(scheme + '//' + location.host + '/api/live');
    ws.addEventListener('open', function () { delayMs = 500; });
    ws.addEventListener('message', function (e) {
      var message;
      try { message = JSON.parse(e.data); } catch (err) { return; }
      if (message.type === 'hello') document.documentElement.dataset.live = 'open';
      document.dispatchEvent(new CustomEvent('live', { detail: message }));
    });
    ws.addEventListener('close', function () {
      document.documentElement.dataset.live = 'closed';
      setTimeout(connect, delayMs);
      delayMs = Math.min(delayMs * 2, 15000);
    });
  }
  connect();
})();
