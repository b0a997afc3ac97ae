const o = {self: null};
o.self = o;
return o;
