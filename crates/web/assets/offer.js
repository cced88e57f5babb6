// The offer iframe's steps: email → code → documents and acceptance.
// Plain script, no framework, no external asset; it talks only to this
// page's own endpoints (same origin), and keeps no state in the browser.
(function () {
  "use strict";
  var base = window.location.pathname.replace(/\/$/, "");
  function $(id) { return document.getElementById(id); }
  function show(id) { $(id).hidden = false; }
  function hide(id) { $(id).hidden = true; }
  function say(form, text) { form.querySelector(".err").textContent = text || ""; }
  function call(method, path, body) {
    return fetch(base + path, {
      method: method,
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
      credentials: "omit",
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (json) {
        return { status: res.status, body: json };
      });
    });
  }
  function failure(answer) {
    var b = answer.body || {};
    if (answer.status === 410) { return "This offer link expired. Open the offer again."; }
    var detail = b.details && b.details[0];
    if (detail && typeof detail.attemptsRemaining === "number") {
      return detail.attemptsRemaining > 0
        ? "That code is not correct. " + detail.attemptsRemaining + " tries left."
        : "That code can no longer be used. Ask for a new code.";
    }
    return b.message ? b.message.charAt(0).toUpperCase() + b.message.slice(1) + "." : "Something went wrong. Try again.";
  }
  var start = $("get-started");
  start.hidden = false;
  start.addEventListener("click", function () {
    hide("get-started");
    show("email-form");
    $("email").focus();
  });
  // A form's submit: posts what `body` gives to `path`; an answer of
  // status `ok` goes to `then`, any other is said on the form.
  function onSubmit(id, path, body, ok, then) {
    $(id).addEventListener("submit", function (e) {
      e.preventDefault();
      var form = e.target;
      say(form);
      call("POST", path, body()).then(function (a) {
        if (a.status !== ok) { say(form, failure(a)); return; }
        return then(a);
      });
    });
  }
  onSubmit("email-form", "/email", function () { return { email: $("email").value }; }, 202, function (a) {
    show("code-form");
    $("code-form").querySelector("label").textContent = "The 6-digit code we sent to " + a.body.codeSentTo;
    $("code").focus();
  });
  onSubmit("code-form", "/verify", function () { return { code: $("code").value }; }, 200, function () {
    hide("email-form");
    hide("code-form");
    return call("GET", "/documents").then(function (d) {
      var list = $("docs");
      ((d.body && d.body.documents) || []).forEach(function (doc) {
        var li = document.createElement("li");
        var link = document.createElement("a");
        link.href = doc.url;
        link.textContent = doc.title;
        link.setAttribute("download", "");
        li.appendChild(link);
        list.appendChild(li);
      });
      show("accept");
      $("name").focus();
    });
  });
  onSubmit("accept-form", "/accept", function () { return { name: $("name").value }; }, 200, function (a) {
    hide("accept");
    $("done").textContent = "Thank you, " + a.body.name + ". You accepted this offer; " +
      "your benefits platform will take it from here.";
    show("done");
  });
})();
