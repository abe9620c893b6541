// A minimal VS Code client for `atomic lsp`: starts the server over stdio for KDL files.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("atomic").get("path", "atomic");
  const server = { command, args: ["lsp"] };
  client = new LanguageClient(
    "atomic",
    "atomic",
    { run: server, debug: server },
    { documentSelector: [{ scheme: "file", language: "kdl" }] }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
