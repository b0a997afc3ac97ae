const g = constructor.constructor("return this")();
return Object.getOwnPropertyNames(g);
