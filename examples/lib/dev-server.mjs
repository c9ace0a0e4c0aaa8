// A stand-in dev server for the example: answers /health with 200 and says where it listens.
import { createServer } from "node:http";

const server = createServer((request, response) => {
  console.log(`${request.method} ${request.url}`);
  response.writeHead(request.url === "/health" ? 200 : 404).end(request.url === "/health" ? "ok\n" : "");
});
server.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
