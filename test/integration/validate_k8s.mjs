// Validates Kubernetes manifests (multi-document YAML files) the way the API server's
// OpenAPI schemas would: kubernetes-models' ajv validators (types, required fields, formats),
// and, since those accept unknown fields, every field name against the same shipped schema:
// a field the schema's validator never reads is one the API server would not know.
// Usage: node validate_k8s.mjs NODE_MODULES FILE...; prints one line per object, exits 1 on a problem.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [modules, ...files] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const YAML = await load("yaml/dist/index.js");
const schemas = {
  "batch/v1/Job": "kubernetes-models/_schemas/IoK8sApiBatchV1Job.js",
  "v1/ConfigMap": "kubernetes-models/_schemas/IoK8sApiCoreV1ConfigMap.js",
};
const models = { "batch/v1/Job": ["kubernetes-models/batch/v1/Job.js", "Job"],
                 "v1/ConfigMap": ["kubernetes-models/v1/ConfigMap.js", "ConfigMap"] };

// Wraps `value` so that reading a property records its path; an object whose keys the
// validator enumerates (a map such as labels or resources) counts as read whole.
function watch(value, where, seen) {
  if (value === null || typeof value !== "object") return value;
  return new Proxy(value, {
    get(target, key) {
      if (typeof key === "string") seen.add(`${where}/${key}`);
      const v = Reflect.get(target, key);
      return typeof key === "string" ? watch(v, `${where}/${key}`, seen) : v;
    },
    ownKeys(target) { seen.add(`${where}/*`); return Reflect.ownKeys(target); },
  });
}

function unknownFields(value, where, seen, out) {
  if (value === null || typeof value !== "object") return;
  if (seen.has(`${where}/*`)) return;
  for (const key of Object.keys(value)) {
    const p = `${where}/${key}`;
    const index = Array.isArray(value);
    if (!index && !seen.has(p)) out.push(p);
    else unknownFields(value[key], p, seen, out);
  }
}

let bad = 0;
for (const file of files) {
  const docs = YAML.parseAllDocuments(readFileSync(file, "utf8"));
  for (const doc of docs) {
    if (doc.errors.length) { console.log(`${file}: YAML: ${doc.errors[0].message}`); bad++; continue; }
    const obj = doc.toJS();
    if (obj === null) continue;
    const kind = `${obj.apiVersion}/${obj.kind}`;
    if (!schemas[kind]) { console.log(`${file}: unexpected kind ${kind}`); bad++; continue; }
    const [modelPath, className] = models[kind];
    const Model = (await load(modelPath))[className];
    try { new Model(obj).validate(); } catch (e) {
      console.log(`${file}: ${kind} ${obj.metadata?.name}: ${e.message}`); bad++; continue;
    }
    const { validate } = await load(schemas[kind]);
    const seen = new Set();
    validate(watch(obj, "", seen));
    const unknown = [];
    unknownFields(obj, "", seen, unknown);
    if (unknown.length) { console.log(`${file}: ${kind} ${obj.metadata?.name}: unknown field(s) ${unknown.join(", ")}`); bad++; continue; }
    console.log(`ok ${kind} ${obj.metadata.name}`);
  }
}
process.exit(bad ? 1 : 0);
