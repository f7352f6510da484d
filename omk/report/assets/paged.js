(function(){
  'use strict';
  var D=document, $=function(id){return D.getElementById(id);};
  var L=JSON.parse($('omk-labels').textContent);
  var table=$('results'), body=table.tBodies[0], view=$('sample-view'), note=$('table-note');
  var q=$('filter'), st=$('status-filter'), count=$('count');
  var labels=D.querySelectorAll('.pager .page-label'), steps=D.querySelectorAll('.pager button[data-step]');
  var repeated=table.getAttribute('data-repeated')==='1', SIZE=+table.getAttribute('data-page-size');
  var threshold=table.hasAttribute('data-threshold')?parseFloat(table.getAttribute('data-threshold')):null;
  var CHUNK=+$('omk-rows').getAttribute('data-chunk');
  var KEYS=['id'].concat(repeated?['repeat']:[],['state','fact','behavior','judge','composite','cost','latency']);
  var BADGE={passed:'pass',failed:'fail',errored:'error'};
  var byIndex=[], rows=[], shown=[], page=0, selected=null, chunks={}, cached=[];
  var collator=new Intl.Collator();

  function bytes(id){
    var s=atob($(id).textContent), a=new Uint8Array(s.length);
    for(var i=0;i<s.length;i++){a[i]=s.charCodeAt(i);}
    return a;
  }
  function unpack(id){
    return Promise.resolve(id).then(function(id){
      return new Response(new Blob([bytes(id)]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
    }).then(JSON.parse);
  }
  // as Python formats a number with a fixed count of decimals: an exact half rounds to even
  function num(v,d){
    if(v===null||v===undefined){return '\u2014';}
    var x=Math.abs(v).toFixed(d+25), cut=x.length-25;
    if(/^50*$/.test(x.slice(cut))){
      var head=x.slice(0,cut).replace(/\.$/,'');
      if(+head.charAt(head.length-1)%2===0){return (v<0?'-':'')+head;}
    }
    return v.toFixed(d);
  }
  // text as it reads in a page rendered on the server, whose parser drops NUL characters
  function clean(s){return String(s).replace(/\u0000/g,'');}
  function el(tag,cls,text){
    var e=D.createElement(tag);
    if(cls){e.className=cls;}
    if(text!==undefined&&text!==null){e.textContent=clean(text);}
    return e;
  }
  function add(parent){
    for(var i=1;i<arguments.length;i++){if(arguments[i]){parent.appendChild(arguments[i]);}}
    return parent;
  }
  function txt(s){return D.createTextNode(clean(s));}
  function badge(state){return el('span','badge '+(BADGE[state]||'skip'),L[state]||state);}
  function labelled(td,name){td.setAttribute('data-label',name);return td;}

  function cell(r,key){
    var v=r[key], td;
    if(key==='id'){return add(el('td'),el('code',null,v));}
    if(key==='state'){return labelled(add(el('td'),badge(v)),L.columns.state);}
    td=labelled(el('td','num'),L.columns[key]);
    if(key==='repeat'){td.textContent=v;}
    else if(key==='cost'){td.textContent=v===null?'\u2014':'$'+num(v,4);}
    else if(key==='latency'){td.textContent=v===null?'\u2014':num(v,0)+' ms';}
    else{td.textContent=num(v,2); if(v!==null&&threshold!==null){td.className+=v>=threshold?' ok':' bad';}}
    return td;
  }
  function draw(){
    var pages=Math.max(1,Math.ceil(shown.length/SIZE)), frag=D.createDocumentFragment();
    page=Math.max(0,Math.min(page,pages-1));
    shown.slice(page*SIZE,page*SIZE+SIZE).forEach(function(r){
      var tr=el('tr',r.index===selected?'selected':null);
      tr.setAttribute('data-index',r.index); tr.setAttribute('data-state',r.state);
      KEYS.forEach(function(k){tr.appendChild(cell(r,k));});
      frag.appendChild(tr);
    });
    body.textContent=''; body.appendChild(frag);
    count.textContent=shown.length+' / '+rows.length;
    Array.prototype.forEach.call(labels,function(s){s.textContent=L.page.replace('{n}',page+1).replace('{m}',pages);});
    Array.prototype.forEach.call(steps,function(b){b.disabled=b.getAttribute('data-step')<0?page===0:page>=pages-1;});
  }
  function apply(){
    var text=q.value.trim().toLowerCase(), want=st.value;
    shown=rows.filter(function(r){return (!want||r.state===want)&&(!text||r.search.indexOf(text)!==-1);});
    page=0; draw();
  }
  function sortBy(th,i){
    var key=KEYS[i], asc=th.getAttribute('aria-sort')!=='ascending', numeric=th.classList.contains('num');
    Array.prototype.forEach.call(table.tHead.rows[0].cells,function(o){o.removeAttribute('aria-sort');});
    th.setAttribute('aria-sort',asc?'ascending':'descending');
    rows.sort(function(a,b){
      var x=a[key], y=b[key], c;
      if(numeric){x=x===null?-Infinity:x; y=y===null?-Infinity:y; c=x<y?-1:x>y?1:0;}
      else{c=collator.compare(String(x),String(y));}
      return asc?c:-c;
    });
    apply();
  }

  // a panel is a tree built on the server (omk/report/html_panel.py): a text, or [tag, attributes,
  // ...children] with attributes null, a class name or an object; 'if-repeated' holds what shows
  // only when the run repeated samples. Only these tags and attributes are made.
  var TAGS={}, ATTRS={'class':1,id:1,title:1,'data-label':1};
  'h2 h3 h4 h5 p span b code small pre div ul li table thead tbody tr th td section'.split(' ').forEach(function(t){TAGS[t]=1;});
  function build(n){
    if(typeof n==='string'){return txt(n);}
    var tag=n[0], a=n[1], e, i;
    if(tag==='if-repeated'){e=D.createDocumentFragment(); if(!repeated){return e;}}
    else if(TAGS[tag]===1){e=D.createElement(tag);}
    else{throw new Error('a panel cannot hold <'+tag+'>');}
    if(typeof a==='string'){e.className=a;}
    else if(a){Object.keys(a).forEach(function(k){if(ATTRS[k]===1){e.setAttribute(k,a[k]);}});}
    for(i=2;i<n.length;i++){e.appendChild(build(n[i]));}
    return e;
  }
  function render(i,nodes){
    view.textContent=''; view.setAttribute('data-index',i);
    nodes.forEach(function(n){view.appendChild(build(n));});
  }
  function details(i){
    var k=Math.floor(i/CHUNK);
    if(!chunks[k]){
      chunks[k]=unpack('omk-details-'+k); cached.push(k);
      if(cached.length>16){delete chunks[cached.shift()];}
    }
    return chunks[k].then(function(list){return list[i-k*CHUNK];});
  }
  function mark(i){
    selected=i;
    Array.prototype.forEach.call(D.querySelectorAll('#results tbody tr, table.listing tbody tr'),function(r){
      var at=r.hasAttribute('data-index')?r.getAttribute('data-index'):(r.getAttribute('data-detail')||'').slice(7);
      r.classList.toggle('selected',at!==''&&+at===i);
    });
  }
  function reveal(panel){
    Array.prototype.forEach.call(D.querySelectorAll('.detail'),function(d){d.hidden=d!==panel&&!d.classList.contains('failing');});
    panel.scrollIntoView({block:'start'});
  }
  // a panel rendered on the server (the failures') when there is one, unless asked near the table
  function show(id,nearTable){
    var fixed=$(id), m=/^sample-(\d+)$/.exec(id), i=m?+m[1]:null;
    if(!nearTable&&fixed&&fixed.classList.contains('detail')){mark(i); reveal(fixed); return Promise.resolve();}
    if(i===null){return Promise.resolve();}
    return ready.then(function(){
      if(i>=byIndex.length){return;}
      return details(i).then(function(d){render(i,d); mark(i); reveal(view);});
    });
  }
  function go(id,nearTable){history.replaceState(null,'','#'+id); return show(id,nearTable);}

  function load(data){
    byIndex=data;
    data.forEach(function(r){r.search=[r.id,r.state].concat(r.capability,[r.difficulty||'']).join(' ').toLowerCase();});
    rows=data.filter(function(r){return r.state!=='passed';}).concat(data.filter(function(r){return r.state==='passed';}));
    note.textContent=''; apply();
  }
  var ready=unpack('omk-rows').then(load,function(){note.textContent=L.unreadable;});
  q.addEventListener('input',apply); st.addEventListener('change',apply);
  Array.prototype.forEach.call(steps,function(b){
    b.addEventListener('click',function(){page+=+b.getAttribute('data-step'); draw();});
  });
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){th.addEventListener('click',function(){sortBy(th,i);});});
  body.addEventListener('click',function(e){
    var tr=e.target.closest('tr'); if(tr){go('sample-'+tr.getAttribute('data-index'),true);}
  });
  Array.prototype.forEach.call(D.querySelectorAll('table.listing tbody tr'),function(tr){
    tr.addEventListener('click',function(){go(tr.getAttribute('data-detail'),false);});
  });
  window.addEventListener('hashchange',function(){show(decodeURIComponent(location.hash.slice(1)),false);});
  if(location.hash.length>1){show(decodeURIComponent(location.hash.slice(1)),false);}
})();
