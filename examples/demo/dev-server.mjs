// The demo's dev server (scene 4): says where it is ready and logs each request. A request to /fail
// (a browser, curl) makes it log an error, the line the scene's wake_on_pattern waits for: nobody
// types into the job, so the wake may quote the line.
import { createServer } from "node:http";

const server = createServer((request, response) => {
  const failed = request.url === "/fail";
  console.log(`${request.method} ${request.url} ${failed ? 500 : 200}`);
  if (failed) console.log("ERROR: the database is unreachable (asked for at /fail)");
  response
    .writeHead(failed ? 500 : 200, { "content-type": "text/plain" })
    .end(failed ? "failed, as asked\n" : "hello from the demo's dev server\n");
});
server.listen(0, "127.0.0.1", () => console.log(`ready on http://127.0.0.1:${server.address().port}`));
