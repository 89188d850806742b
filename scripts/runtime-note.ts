/**
 * Run by `npm install` (the prepare script) on the project's own Node. When npm itself runs on
 * another major version of Node (the machine's), says once which Node runs the project: npm's
 * engine warnings about the machine's Node are not shown (.npmrc), and this line replaces them.
 */
const npmNode = /\bnode\/v(\d+)\.[\d.]+/.exec(process.env.npm_config_user_agent ?? "");
const ours = process.versions.node;
if (npmNode && Number(npmNode[1]) !== Number(ours.split(".")[0])) {
  process.stdout.write(
    `npm runs on this machine's Node ${npmNode[0].slice("node/".length)}; the project runs on its own Node v${ours} ` +
      "(node_modules/.bin/node), which npm start, npm test and every npm script use.\n",
  );
}
