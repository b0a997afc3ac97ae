globalThis.left = 1;
for (;;) { try { while (true) {} } catch (e) {} }
