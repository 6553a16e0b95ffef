// agentlog viewer: theme, keyboard navigation, copy buttons, deep links,
// paging and live tail. Session text never reaches this code as script:
// the server escapes it and the Content-Security-Policy forbids inline code.
(function () {
  'use strict';
  var root = document.documentElement;
  try {
    var saved = localStorage.getItem('agentlog-theme');
    if (saved) root.setAttribute('data-theme', saved);
  } catch (e) {}
  function toggleTheme() {
    var dark = root.getAttribute('data-theme') === 'dark' ||
      (!root.getAttribute('data-theme') && window.matchMedia && matchMedia('(prefers-color-scheme: dark)').matches);
    var next = dark ? 'light' : 'dark';
    root.setAttribute('data-theme', next);
    try { localStorage.setItem('agentlog-theme', next); } catch (e) {}
  }
  function openAncestors(el) {
    for (var p = el; p; p = p.parentElement) if (p.tagName === 'DETAILS') p.open = true;
  }
  function items() {
    return Array.prototype.slice.call(document.querySelectorAll('#entries [data-i], table.list tbody tr, .hits .hit-row'))
      .filter(function (el) { return !el.closest('[hidden]'); });
  }
  var cur = -1;
  function focusItem(i) {
    var list = items();
    if (!list.length) return;
    i = Math.max(0, Math.min(list.length - 1, i));
    if (list[cur]) list[cur].classList.remove('focus', 'sel');
    cur = i;
    var el = list[i];
    el.classList.add(el.tagName === 'TR' ? 'sel' : 'focus');
    el.scrollIntoView({ block: 'nearest' });
  }
  function goHash() {
    var h = decodeURIComponent(location.hash.slice(1));
    if (!h) return;
    var el = document.getElementById(h);
    if (!el) return;
    openAncestors(el);
    el.classList.add('hit');
    el.scrollIntoView({ block: 'start' });
    var list = items();
    cur = list.indexOf(el);
  }
  document.addEventListener('click', function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    if (t.id === 'theme') { toggleTheme(); return; }
    if (t.classList.contains('copy')) {
      var code = t.parentElement && t.parentElement.querySelector('code');
      if (!code) return;
      var text = code.textContent;
      var done = function () { t.textContent = 'copied'; setTimeout(function () { t.textContent = 'copy'; }, 1500); };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () { selectText(code); });
      } else { selectText(code); }
      return;
    }
    if (t.id === 'more' || t.id === 'earlier') { ev.preventDefault(); loadPage(t); }
    if (t.classList.contains('branch') && t.hasAttribute('data-leaf')) {
      ev.preventDefault();
      showBranch(t.getAttribute('data-leaf'), t.getAttribute('href'));
    }
  });
  // An exported tree: show the entries from the root to `leaf`.
  function showBranch(leaf, hash) {
    var nodes = document.querySelectorAll('#entries .node[data-eid]');
    var parent = {};
    for (var i = 0; i < nodes.length; i++) parent[nodes[i].getAttribute('data-eid')] = nodes[i].getAttribute('data-parent');
    var on = {};
    for (var id = leaf, n = 0; id && !on[id] && n < nodes.length + 1; id = parent[id], n++) on[id] = true;
    for (var j = 0; j < nodes.length; j++) nodes[j].hidden = !on[nodes[j].getAttribute('data-eid')];
    var el = hash && document.getElementById(decodeURIComponent(hash.slice(1)));
    if (el) { openAncestors(el); el.scrollIntoView({ block: 'start' }); }
  }
  function selectText(el) {
    var r = document.createRange(); r.selectNodeContents(el);
    var s = getSelection(); s.removeAllRanges(); s.addRange(r);
  }
  document.addEventListener('keydown', function (ev) {
    var tag = (ev.target && ev.target.tagName) || '';
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') {
      if (ev.key === 'Escape') ev.target.blur();
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var list;
    switch (ev.key) {
      case 'j': focusItem(cur + 1); break;
      case 'k': focusItem(cur - 1); break;
      case 'g': focusItem(0); break;
      case 'G': list = items(); focusItem(list.length - 1); break;
      case 'o': case 'Enter':
        list = items();
        var el = list[cur]; if (!el) return;
        if (el.tagName === 'TR' || el.classList.contains('hit-row')) {
          var a = el.querySelector('a[href]'); if (a) location.href = a.href;
        } else {
          var ds = el.querySelectorAll('details'); var open = ds.length && !ds[0].open;
          for (var i = 0; i < ds.length; i++) ds[i].open = open;
        }
        break;
      case '/': var q = document.getElementById('q'); if (q) { ev.preventDefault(); q.focus(); } break;
      case 't': toggleTheme(); break;
      case 'n': var nx = document.querySelector('a[rel=next]'); if (nx) location.href = nx.href; break;
      case 'p': var pv = document.querySelector('a[rel=prev]'); if (pv) location.href = pv.href; break;
      case '?': var h = document.getElementById('help'); if (h) h.classList.toggle('on'); break;
      default: return;
    }
  });
  function loadPage(btn) {
    var url = btn.getAttribute('data-url');
    if (!url || btn.disabled) return;
    btn.disabled = true;
    fetch(url, { credentials: 'same-origin' }).then(function (r) {
      var next = r.headers.get('X-Next');
      return r.text().then(function (html) { return { html: html, next: next }; });
    }).then(function (res) {
      var box = document.getElementById('entries');
      var tmp = document.createElement('template');
      tmp.innerHTML = res.html;
      if (btn.id === 'more') {
        box.appendChild(tmp.content);
      } else {
        var y = document.documentElement.scrollHeight - window.scrollY;
        box.insertBefore(tmp.content, box.firstChild);
        window.scrollTo(0, document.documentElement.scrollHeight - y);
      }
      if (res.next) { btn.setAttribute('data-url', res.next); btn.disabled = false; }
      else { btn.remove(); if (btn.id === 'more') startTail(); }
    }, function () { btn.disabled = false; });
  }
  var tailing = false;
  function startTail() {
    var main = document.querySelector('main[data-tail]');
    if (!main || tailing || document.getElementById('more') || !window.EventSource) return;
    tailing = true;
    var es = new EventSource(main.getAttribute('data-tail'));
    var live = document.getElementById('live');
    es.addEventListener('open', function () { if (live) live.classList.add('on'); });
    es.addEventListener('entries', function (ev) {
      var d = JSON.parse(ev.data);
      var tmp = document.createElement('template');
      tmp.innerHTML = d.html;
      // An entry the page has already (its last line, read by the page
      // before its newline came, which the tail waits for) is not added
      // twice.
      Array.prototype.slice.call(tmp.content.children).forEach(function (c) {
        if (c.id && document.getElementById(c.id)) c.remove();
      });
      document.getElementById('entries').appendChild(tmp.content);
    });
    es.addEventListener('error', function () { if (live) live.classList.remove('on'); });
  }
  if ('IntersectionObserver' in window) {
    var io = new IntersectionObserver(function (es) {
      es.forEach(function (e) { if (e.isIntersecting && e.target.id === 'more') loadPage(e.target); });
    }, { rootMargin: '600px' });
    var more = document.getElementById('more');
    if (more) io.observe(more);
  }
  // Printed, every collapsed block is open (for browsers whose print
  // style cannot open them), and closed again after.
  var printOpened = [];
  window.addEventListener('beforeprint', function () {
    document.querySelectorAll('details:not([open])').forEach(function (d) { d.open = true; printOpened.push(d); });
  });
  window.addEventListener('afterprint', function () {
    printOpened.forEach(function (d) { d.open = false; });
    printOpened = [];
  });
  window.addEventListener('hashchange', goHash);
  goHash();
  startTail();
})();
