const a = [];
for (;;) a.push(new Array(1e5).fill("x"));
