return await tools.t([1, 2]);
