// Bundles the extension (CommonJS for VS Code's extension host, with the
// ESM-only ACP SDK inlined) and the chat view's script (an IIFE for the webview).
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: "warning", target: "es2022" };

await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.cjs",
    platform: "node",
    format: "cjs",
    external: ["vscode"],
  }),
  esbuild.build({
    ...common,
    entryPoints: ["src/webview/main.ts"],
    outfile: "dist/webview.js",
    platform: "browser",
    format: "iife",
  }),
]);
