// The demo's dev server (scene 4): says where it is ready, logs each request, and reads lines on its
// stdin — a line containing "error" makes it log an error 3 s later (what the scene's wake_on_pattern
// waits for), so the person can set the wake off from "Type into it". It never prints what was typed.
import { createServer } from "node:http";
import { createInterface } from "node:readline";

const server = createServer((request, response) => {
  console.log(`${request.method} ${request.url} 200`);
  response.writeHead(200, { "content-type": "text/plain" }).end("hello from the demo's dev server\n");
});
server.listen(0, "127.0.0.1", () => console.log(`ready on http://127.0.0.1:${server.address().port}`));

// The error comes 3 s later: a wake_on_pattern does not listen while the person types, nor in the
// second after, so that a wake never carries the program's echo of what they typed.
createInterface({ input: process.stdin }).on("line", (line) => {
  if (!/error/i.test(line)) return console.log(`read ${Buffer.byteLength(line)} bytes of input`);
  console.log("as asked: failing in 3 s");
  setTimeout(() => console.log("ERROR: the person asked for one from the keyboard"), 3_000);
});
