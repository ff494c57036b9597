import type { EnqueueTransaction } from "../database/app-transaction.js";
import type { Database } from "../database/connection.js";
import type { EnqueueOptions, JobArguments } from "../definitions/job-definition.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import { ConfigurationError, InvalidFlowError } from "../errors.js";
import { enqueueJobs, type EnqueueRequest } from "../lifecycle/enqueue.js";
import type { EnqueueResult } from "../lifecycle/enqueue-result.js";
import { checkJobName, rejectUnknownKeys } from "../option-checks.js";
import { shown } from "../shown-value.js";
import { workflowJobOptions } from "../definitions/workflow-job-options.js";
import type { JobName, NamesJobs } from "../definitions/job-names.js";

/**
 * One node of a flow: a job, and the jobs it waits for (`children`, which run first). `options`
 * are those of `enqueue`, without `transaction` (the whole flow's goes to `firm.flow`). `Jobs`
 * is the FirmQueue's map of job names to argument types: with one, each node's `name` is one of
 * its names and `args` (then required) that job's arguments; without one, any name and any
 * storable arguments (absent: null).
 */
// biome-ignore lint/suspicious/noExplicitAny: as FirmQueue's default: no map, any name and storable arguments
export type FlowNode<Jobs extends object = any> = {
  readonly [Name in JobName<Jobs>]: {
    readonly name: Name;
    readonly options?: Omit<EnqueueOptions, "transaction"> | undefined;
    readonly children?: readonly FlowNode<Jobs>[] | undefined;
  } & (NamesJobs<Jobs> extends true ? { readonly args: Jobs[Name] } : { readonly args?: JobArguments | undefined });
}[JobName<Jobs>];

/** A node as written: the input node with the result of its enqueue, and its children alike. */
export interface FlowJob {
  readonly name: string;
  readonly args: unknown;
  readonly options?: Omit<EnqueueOptions, "transaction"> | undefined;
  /** The job's id, or null when its concurrency limit dropped it (`status: "dropped"`). */
  readonly id: number | null;
  readonly status: EnqueueResult["status"];
  readonly children: FlowJob[];
}

/** Options of `firm.flow`. */
export interface FlowOptions {
  /** The application's open transaction: the whole flow is written inside it (as `enqueue`'s). */
  readonly transaction?: EnqueueTransaction | undefined;
}

const NODE_KEYS = new Set(["name", "args", "options", "children"]);
const FLOW_OPTION_KEYS = new Set(["transaction"]);

/** A node placed in the call's list: children always come before their parents. */
interface PlacedNode {
  readonly node: FlowNode;
  readonly path: string;
  readonly childPlaces: number[];
}

/**
 * Write a flow: every node a job, each parent depending on its children, all in one transaction
 * (the caller's when `transaction` is given), so either every job of the tree exists or none does.
 * A node object that appears under two parents is one job both wait for; a node under itself is
 * an InvalidFlowError. Every node is checked (shape, declared name, options, arguments against
 * the schema) before anything is written.
 */
export async function enqueueFlow(
  database: () => Promise<Database>,
  registry: JobRegistry,
  policies: JobPolicies,
  root: FlowNode,
  options: FlowOptions = {},
): Promise<FlowJob> {
  if (typeof options !== "object" || options === null) throw new ConfigurationError("flow options must be an object");
  rejectUnknownKeys(options, FLOW_OPTION_KEYS, "flow option");
  const placed = placeNodes(root);
  const requests: EnqueueRequest[] = placed.map(({ node, path, childPlaces }) => ({
    name: node.name,
    args: node.args,
    defaults: workflowJobOptions(
      registry,
      node.name,
      "a flow's",
      (problem) => new InvalidFlowError(`${path}.name`, problem),
    ),
    ...(node.options === undefined ? {} : { options: node.options }),
    ...(childPlaces.length > 0 ? { inCall: childPlaces } : {}),
  }));
  const results = await enqueueJobs(await database(), policies, requests, options.transaction);
  const built = new Map<FlowNode, FlowJob>();
  for (const [place, { node, childPlaces }] of placed.entries()) {
    const result = results[place]!;
    built.set(node, {
      name: node.name,
      args: node.args,
      ...(node.options === undefined ? {} : { options: node.options }),
      id: result.id,
      status: result.status,
      children: childPlaces.map((child) => built.get(placed[child]!.node)!),
    });
  }
  return built.get(root)!;
}

/**
 * Check every node and list them children first (an iterative depth-first walk, so a deep chain
 * does not exhaust the stack). Each distinct node object gets one place.
 */
function placeNodes(root: FlowNode): PlacedNode[] {
  const placed: PlacedNode[] = [];
  const places = new Map<FlowNode, number>();
  const onPath = new Set<FlowNode>();
  const stack: { node: FlowNode; path: string; next: number }[] = [
    { node: checkNode(root, "flow"), path: "flow", next: 0 },
  ];
  onPath.add(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const children = top.node.children ?? [];
    if (top.next < children.length) {
      const index = top.next++;
      const path = `${top.path}.children[${index}]`;
      const child = checkNode(children[index], path);
      if (onPath.has(child))
        throw new InvalidFlowError(path, "is one of its own ancestors: a flow cannot wait for itself");
      if (places.has(child)) continue;
      onPath.add(child);
      stack.push({ node: child, path, next: 0 });
      continue;
    }
    stack.pop();
    onPath.delete(top.node);
    const childPlaces = [...new Set(children.map((child) => places.get(child)!))];
    places.set(top.node, placed.length);
    placed.push({ node: top.node, path: top.path, childPlaces });
  }
  return placed;
}

function checkNode(value: unknown, path: string): FlowNode {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new InvalidFlowError(path, `must be an object { name, args, options?, children? }, got ${shown(value)}`);
  for (const key of Object.keys(value))
    if (!NODE_KEYS.has(key))
      throw new InvalidFlowError(path, `has an unknown key "${key}" (a node has name, args, options and children)`);
  const node = value as FlowNode;
  if (node.name === undefined) throw new InvalidFlowError(`${path}.name`, "is missing");
  try {
    checkJobName(node.name);
  } catch (error) {
    throw new InvalidFlowError(`${path}.name`, (error as Error).message);
  }
  if (node.children !== undefined && !Array.isArray(node.children))
    throw new InvalidFlowError(`${path}.children`, `must be a list of nodes, got ${shown(node.children)}`);
  if (node.options !== undefined) {
    if (typeof node.options !== "object" || node.options === null || Array.isArray(node.options))
      throw new InvalidFlowError(`${path}.options`, `must be an object, got ${shown(node.options)}`);
    if (Object.hasOwn(node.options, "transaction"))
      throw new InvalidFlowError(
        `${path}.options.transaction`,
        "is not a node's option: pass the transaction to firm.flow(tree, { transaction })",
      );
    // A duplicate's row would be deleted again, leaving its parent waiting on nothing.
    if (node.options.key !== undefined)
      throw new InvalidFlowError(`${path}.options.key`, "is not supported in a flow: a flow's jobs cannot be unique");
  }
  return node;
}
