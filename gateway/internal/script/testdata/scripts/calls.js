await Promise.all(Array.from({length: 10000}, (_, i) => tools.x({i})));
