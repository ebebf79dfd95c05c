"use strict";
(function () {
  var TOP = 90; // where a target stops under the sticky bar (its scroll-margin-top)

  // Chunks of a long timeline wait in <template>s; bring them in, in order.
  function load(template) {
    var more = template.previousElementSibling;
    template.replaceWith(template.content);
    if (more && more.classList.contains("more")) more.remove();
  }
  // The chunk that holds `id`, alone: the chunks before it stay where they are.
  function loadUntil(id) {
    var found = document.getElementById(id);
    if (found) return found;
    var templates = document.querySelectorAll("template.later");
    for (var i = 0; i < templates.length; i++) {
      if (templates[i].content.getElementById(id)) { load(templates[i]); break; }
    }
    return document.getElementById(id);
  }
  // A chunk comes in as its place nears the screen; one at a time, as each pushes the
  // places after it away.
  var watcher = "IntersectionObserver" in window ? new IntersectionObserver(function (seen) {
    for (var i = 0; i < seen.length; i++) {
      var template = seen[i].target.nextElementSibling;
      if (seen[i].isIntersecting && template && template.tagName === "TEMPLATE") {
        load(template);
        return;
      }
    }
  }, { rootMargin: "600px" }) : null;
  document.querySelectorAll(".more").forEach(function (more) {
    more.querySelector("button").addEventListener("click", function () {
      var template = more.nextElementSibling;
      if (template && template.tagName === "TEMPLATE") load(template);
    });
    if (watcher) watcher.observe(more);
  });

  // Going to an event or a condensation: loaded, unfolded, shown, scrolled to.
  function go(id, mark) {
    var target = loadUntil(id);
    if (!target) return null;
    if (target.classList.contains("gone")) document.body.classList.remove("only-view");
    document.getElementById("only-view").checked = document.body.classList.contains("only-view");
    if (target.tagName === "DETAILS") target.open = true;
    for (var up = target.parentElement; up; up = up.parentElement) {
      if (up.tagName === "DETAILS") up.open = true;
    }
    if (mark) mark(target);
    target.scrollIntoView({ block: "start" });
    return target;
  }
  function decoded(text) {  // an address typed or pasted may not decode: use it as it is
    try {
      return decodeURIComponent(text);
    } catch (error) {
      return text;
    }
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a");
    var href = link && (link.getAttribute("href") || link.getAttribute("xlink:href"));
    if (!href || href.charAt(0) !== "#") return;
    event.preventDefault();
    var id = decoded(href.slice(1));
    if (go(id)) history.pushState(null, "", "#" + encodeURIComponent(id));
  });
  function fromAddress() {
    if (location.hash.length > 1) go(decoded(location.hash.slice(1)));
  }
  window.addEventListener("popstate", fromAddress);
  window.addEventListener("hashchange", fromAddress);
  fromAddress();

  document.getElementById("only-view").addEventListener("change", function (event) {
    document.body.classList.toggle("only-view", event.target.checked);
  });

  // Every event and condensation in order, loaded or not: [id, band?, lower-cased text].
  var entries = null;
  function index() {
    if (entries) return entries;
    entries = [];
    document.querySelectorAll(".timeline").forEach(function (timeline) {
      Array.prototype.forEach.call(timeline.children, function (child) {
        var items = child.tagName === "TEMPLATE"
          ? child.content.querySelectorAll(".event, .band")
          : child.matches(".event, .band") ? [child] : [];
        Array.prototype.forEach.call(items, function (item) {
          entries.push([item.id, item.classList.contains("band"), item.textContent.toLowerCase()]);
        });
      });
    });
    return entries;
  }

  // Find: every match over every event, forgotten ones and unloaded chunks included.
  var box = document.getElementById("find");
  var said = document.getElementById("found");
  var hits = [];
  var at = -1;
  var marked = null;
  function mark(element) {
    if (marked) marked.classList.remove("hit");
    marked = element;
    element.classList.add("hit");
  }
  function search() {
    var query = box.value.trim().toLowerCase();
    hits = [];
    at = -1;
    if (marked) marked.classList.remove("hit");
    if (!query) { said.textContent = ""; return; }
    index().forEach(function (entry) {
      if (entry[2].indexOf(query) !== -1) hits.push(entry[0]);
    });
    said.textContent = hits.length ? hits.length + " found" : "not found";
    if (hits.length) step(1);
  }
  function step(by) {
    if (!hits.length) return;
    at = (at + by + hits.length) % hits.length;
    go(hits[at], mark);
    said.textContent = (at + 1) + " of " + hits.length;
  }
  var pending = null;
  box.addEventListener("input", function () {
    clearTimeout(pending);
    pending = setTimeout(search, 200);
  });
  box.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      event.preventDefault();
      clearTimeout(pending);
      if (at === -1) search(); else step(event.shiftKey ? -1 : 1);
    } else if (event.key === "Escape") {
      box.blur();
    }
  });
  document.getElementById("next-hit").addEventListener("click", function () { step(1); });
  document.getElementById("prev-hit").addEventListener("click", function () { step(-1); });

  // n / p: the next or previous condensation below or above the top of the screen.
  function band(by) {
    var bands = index().filter(function (entry) { return entry[1]; });
    if (by < 0) bands.reverse();
    for (var i = 0; i < bands.length; i++) {
      var element = document.getElementById(bands[i][0]);
      var top = element ? element.getBoundingClientRect().top : Infinity;
      if (by > 0 ? top > TOP + 4 : top < TOP - 4) { go(bands[i][0]); return; }
    }
  }
  document.addEventListener("keydown", function (event) {
    var typing = event.target.closest && event.target.closest("input, textarea");
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "/") { event.preventDefault(); box.focus(); box.select(); }
    else if (event.key === "n" || event.key === "j") band(1);
    else if (event.key === "p" || event.key === "k") band(-1);
  });
})();
