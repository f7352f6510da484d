(function(){
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(table){
    var body=table.tBodies[0], heads=table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads,function(th,i){
      function sort(){
        var asc=th.getAttribute('aria-sort')!=='ascending', numeric=th.classList.contains('num');
        Array.prototype.forEach.call(heads,function(o){o.removeAttribute('aria-sort');});
        th.setAttribute('aria-sort',asc?'ascending':'descending');
        var rows=Array.prototype.slice.call(body.rows);
        rows.sort(function(a,b){
          var x=a.cells[i].getAttribute('data-v'), y=b.cells[i].getAttribute('data-v'), c;
          if(x===''||y===''){c=(x==='')-(y==='');}
          else{
            if(numeric){x=parseFloat(x); y=parseFloat(y); c=x<y?-1:x>y?1:0;}
            else{c=x.localeCompare(y);}
            if(!asc){c=-c;}
          }
          return c||(parseInt(a.getAttribute('data-i'),10)-parseInt(b.getAttribute('data-i'),10));
        });
        rows.forEach(function(r){body.appendChild(r);});
      }
      th.tabIndex=0;
      th.addEventListener('click',sort);
      th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();sort();}});
    });
  });
})();
