try { await import("os"); } catch (e) { console.log(String(e)); }
try { require("fs"); } catch (e) { console.log(String(e)); }
return typeof fetch;
