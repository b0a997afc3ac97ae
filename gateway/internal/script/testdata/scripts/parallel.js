const [a, b] = await Promise.all([tools["srv.a"]({id: 1}), tools["srv.b"]()]);
console.log("got", a, b);
return {a, b};
