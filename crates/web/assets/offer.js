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
  $("email-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var form = e.target;
    say(form);
    call("POST", "/email", { email: $("email").value }).then(function (a) {
      if (a.status !== 202) { say(form, failure(a)); return; }
      show("code-form");
      $("code-form").querySelector("label").textContent = "The 6-digit code we sent to " + a.body.codeSentTo;
      $("code").focus();
    });
  });
  $("code-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var form = e.target;
    say(form);
    call("POST", "/verify", { code: $("code").value }).then(function (a) {
      if (a.status !== 200) { say(form, failure(a)); return; }
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
  });
  $("accept-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var form = e.target;
    say(form);
    call("POST", "/accept", { name: $("name").value }).then(function (a) {
      if (a.status !== 200) { say(form, failure(a)); return; }
      hide("accept");
      $("done").textContent = "Thank you, " + a.body.name + ". You accepted this offer; " +
        "your benefits platform will take it from here.";
      show("done");
    });
  });
})();
