const r = await Promise.allSettled([tools.slow(), tools.err(), tools.fail(), tools.ok()]);
return r.map(x => x.status);
