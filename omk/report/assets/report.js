(function(){
  var table=document.getElementById('results'), body=table.tBodies[0];
  var rows=Array.prototype.slice.call(body.rows);
  var q=document.getElementById('filter'), st=document.getElementById('status-filter');
  var count=document.getElementById('count');
  function apply(){
    var text=q.value.trim().toLowerCase(), want=st.value, shown=0;
    rows.forEach(function(r){
      var ok=(!text||r.getAttribute('data-search').indexOf(text)!==-1)&&(!want||r.getAttribute('data-state')===want);
      r.hidden=!ok; if(ok){shown++;}
    });
    count.textContent=shown+' / '+rows.length;
  }
  q.addEventListener('input',apply); st.addEventListener('change',apply);
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
    th.addEventListener('click',function(){
      var asc=th.getAttribute('aria-sort')!=='ascending', numeric=th.classList.contains('num');
      Array.prototype.forEach.call(table.tHead.rows[0].cells,function(o){o.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',asc?'ascending':'descending');
      var sorted=rows.slice().sort(function(a,b){
        var x=a.cells[i].getAttribute('data-v'), y=b.cells[i].getAttribute('data-v'), c;
        if(numeric){x=x===''?-Infinity:parseFloat(x); y=y===''?-Infinity:parseFloat(y); c=x<y?-1:x>y?1:0;}
        else{c=x.localeCompare(y);}
        return asc?c:-c;
      });
      sorted.forEach(function(r){body.appendChild(r);});
    });
  });
  function show(id){
    var panel=document.getElementById(id); if(!panel){return;}
    Array.prototype.forEach.call(document.querySelectorAll('.detail'),function(d){d.hidden=d!==panel&&!d.classList.contains('failing');});
    rows.forEach(function(r){r.classList.toggle('selected',r.getAttribute('data-detail')===id);});
    panel.scrollIntoView({block:'start'});
  }
  rows.forEach(function(r){
    r.addEventListener('click',function(){var id=r.getAttribute('data-detail'); history.replaceState(null,'','#'+id); show(id);});
  });
  window.addEventListener('hashchange',function(){show(decodeURIComponent(location.hash.slice(1)));});
  if(location.hash.length>1){show(decodeURIComponent(location.hash.slice(1)));}
  apply();
})();
