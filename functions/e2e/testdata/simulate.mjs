// Evaluates IAM requests with @cloud-copilot/iam-simulate (npm, pinned in
// package.json): reads a JSON array of {id, principal, action, resource,
// account, context, policies: [{name, policy}], resourcePolicy} on stdin and
// writes [{id, result, errors}] on stdout, result being the simulator's
// overall result ("Allowed", "ImplicitlyDenied", "ExplicitlyDenied").
import { runSimulation } from '@cloud-copilot/iam-simulate'

let input = ''
for await (const chunk of process.stdin) input += chunk
const out = []
for (const r of JSON.parse(input)) {
  const res = await runSimulation({
    identityPolicies: r.policies,
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: r.resourcePolicy ?? undefined,
    request: {
      principal: r.principal,
      action: r.action,
      resource: { resource: r.resource, accountId: r.account },
      contextVariables: r.context ?? {},
    },
  }, {})
  out.push({ id: r.id, result: res.overallResult ?? 'error', errors: res.resultType === 'error' ? res.errors : undefined })
}
process.stdout.write(JSON.stringify(out))
