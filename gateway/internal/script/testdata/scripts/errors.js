try {
  await tools.fail();
} catch (e) {
  console.error(e.message, e.code, e.result);
}
return await tools.ok({x: [1, 2, 3]});
