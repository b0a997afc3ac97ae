for (;;) console.log("line of output");
