globalThis.x = 1;
Object.prototype.y = 2;
return [typeof x, ({}).y];
