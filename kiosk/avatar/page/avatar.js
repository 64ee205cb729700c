// The avatar page: state, captions and a mouth that follows the reply's audio.
// Every frame is drawn from the audio output position (the process's clock messages map
// performance.now() onto it), never by counting timer ticks; a stop closes the mouth at once.
"use strict";
(function () {
  const body = document.body;
  const mouth = document.getElementById("mouth");
  const reply = document.getElementById("reply");
  const heard = document.getElementById("heard");
  let segments = [];        // {start_s, frame_ms, values, text, lang}, sorted by start
  let samples = [];         // recent clock offsets (position - local time), seconds
  let offset = null;        // the audio position is performance.now()/1000 + offset
  let state = "idle";
  const debug = { frames: [], connected: 0, messages: 0 };
  window.avatar = debug;

  function position() {
    return offset === null ? null : performance.now() / 1000 + offset;
  }

  function onClock(msg) {
    // a message is late by its transit, never early: the largest recent offset is the truest
    samples.push(msg.position_s - performance.now() / 1000);
    if (samples.length > 8) samples.shift();
    offset = Math.max.apply(null, samples);
  }

  function setState(next) {
    state = next;
    body.className = next;
    if (next === "listening") heard.textContent = "";
    if (next === "idle") reply.textContent = "";
  }

  function handle(msg) {
    debug.messages++;
    if (msg.type === "clock") onClock(msg);
    else if (msg.type === "state") setState(msg.state);
    else if (msg.type === "mouth") {
      segments.push(msg);
      segments.sort(function (a, b) { return a.start_s - b.start_s; });
    } else if (msg.type === "stop") {
      segments = [];
      draw(0, "");
    } else if (msg.type === "heard") {
      heard.textContent = msg.text;
    }
  }

  function draw(open, text) {
    mouth.setAttribute("ry", (2 + open * 20).toFixed(2));
    if (text !== null && reply.textContent !== text) reply.textContent = text;
  }

  function frame() {
    const pos = position();
    let open = 0, text = null, seg = null;
    if (pos !== null) {
      while (segments.length && segments[0].start_s + segments[0].values.length *
             segments[0].frame_ms / 1000 <= pos) {
        segments.shift();
      }
      seg = segments.length && segments[0].start_s <= pos ? segments[0] : null;
      if (seg) {
        const i = Math.floor((pos - seg.start_s) * 1000 / seg.frame_ms);
        open = seg.values[Math.min(i, seg.values.length - 1)];
        text = seg.text;
        reply.lang = seg.lang;
      }
    }
    draw(open, text);
    if (debug.frames.length < 40000) {
      // the page's own monotonic time: epoch time would move with a step of the wall clock
      debug.frames.push([performance.now(), pos, open, state]);
    }
    requestAnimationFrame(frame);
  }

  function connect(wait) {
    const ws = new WebSocket("ws://" + location.host + "/ws");
    ws.onopen = function () { debug.connected++; wait = 250; segments = []; };
    ws.onmessage = function (e) { handle(JSON.parse(e.data)); };
    ws.onclose = function () {
      offset = null; samples = [];
      setTimeout(function () { connect(Math.min(wait * 2, 4000)); }, wait);
    };
  }

  connect(250);
  requestAnimationFrame(frame);
})();
