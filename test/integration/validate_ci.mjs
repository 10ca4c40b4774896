// Validates CI pipelines gpuplan exports. GitLab: against GitLab's official CI schema
// (app/assets/javascripts/editor/schema/ci.json) as gitlab-ci-local bundles it: that tool
// needs Node 22 to run, so its schema is read out of its bundle and checked with ajv.
// Buildkite: no package carries Buildkite's schema, so against the step format its
// documentation ("Defining your pipeline steps", command and wait steps) describes, below.
// Usage: node validate_ci.mjs NODE_MODULES gitlab|buildkite FILE; exits 1 with the errors.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [modules, kind, file] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const YAML = await load("yaml/dist/index.js");
const { default: Ajv } = await load("ajv/dist/ajv.js");
const { default: addFormats } = await load("ajv-formats/dist/index.js");

function gitlabSchema() {
  const src = readFileSync(path.join(modules, "gitlab-ci-local/dist/index.js"), "utf8");
  const at = src.indexOf('$id:"https://gitlab.com/.gitlab-ci.yml"');
  if (at < 0) throw new Error("gitlab-ci-local no longer bundles GitLab's CI schema");
  const start = src.lastIndexOf("={", at) + 1;
  let depth = 0, i = start, quote = null;
  for (; i < src.length; i++) {
    const c = src[i];
    if (quote) { if (c === "\\") i++; else if (c === quote) quote = null; continue; }
    if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) { i++; break; }
  }
  return new Function(`return ${src.slice(start, i)}`)();
}

const strings = { type: "array", items: { type: "string" }, minItems: 1 };
// A step key as Buildkite's own schema defines it: github.com/buildkite/pipeline-schema,
// schema.json, definitions.key ("A unique identifier for a step, must not resemble a UUID").
const buildkiteKey = {
  type: "string", maxLength: 100, pattern: "^[a-zA-Z0-9_\\-:${}.,]+$",
  not: { pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$" },
};
const buildkiteSchema = {
  type: "object", required: ["steps"], additionalProperties: false,
  properties: { steps: { type: "array", minItems: 1, items: { oneOf: [
    { type: "object", required: ["command"], additionalProperties: false, properties: {
        label: { type: "string" }, key: buildkiteKey,
        command: { oneOf: [{ type: "string" }, strings] },
        agents: { type: "object", additionalProperties: { type: "string" } },
        timeout_in_minutes: { type: "integer", minimum: 1 },
        artifact_paths: { oneOf: [{ type: "string" }, strings] } } },
    { type: "object", required: ["wait"], additionalProperties: false, properties: {
        wait: { type: "null" }, continue_on_failure: { type: "boolean" } } },
  ] } } },
};

const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
addFormats(ajv);
const validate = ajv.compile(kind === "gitlab" ? gitlabSchema() : buildkiteSchema);
const doc = YAML.parse(readFileSync(file, "utf8"));
if (!validate(doc)) {
  console.log(JSON.stringify(validate.errors, null, 1));
  process.exit(1);
}
console.log(`ok ${kind} ${file}`);
