import { canonicalJson } from './digest';
import type { FieldError } from '../spec/errors';
import { SpecValidationError } from '../spec/errors';
import type { EnvDefinition } from '../envs/types';
import { parseJobSpec } from '../spec/validate';

/**
 * An experiment's grid: spec paths (dotted, `algorithm.id`, `training.learningRate`,
 * `environment.config.slippery`, or a whole section such as `environment.config`), each with the
 * values it takes. The runs are the product of every axis, each the base spec with the point's
 * values set. `training.seed` is the seeds axis: runs that differ only in their seed form one cell.
 */
export type Grid = Record<string, readonly unknown[]>;

export const SEED_PATH = 'training.seed';
/** Most runs one experiment submits: its jobs are queued at once. */
export const MAX_EXPERIMENT_RUNS = 64;
export const MAX_GRID_AXES = 8;
export const MAX_AXIS_VALUES = 32;

/** Spec sections a grid may vary (a run's name is the experiment's, its version the service's). */
const VARIABLE_ROOTS = new Set(['environment', 'algorithm', 'model', 'rollout', 'training', 'collapse', 'priority', 'labels', 'device']);
const PATH = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*){0,5}$/;

/** A cell: the point of every axis but the seeds, and its runs' seeds. */
export interface ExperimentCell {
  index: number;
  /** Canonical JSON of the point: equal points, equal keys. */
  key: string;
  point: Record<string, unknown>;
  /** `path=value` of each axis, for people. */
  label: string;
  seeds: number[];
}

/** One job of the experiment: its cell, its seed, and the spec it is submitted with (not yet resolved). */
export interface ExperimentRun {
  cell: number;
  seed: number;
  point: Record<string, unknown>;
  spec: Record<string, unknown>;
}

/** A deep copy of `spec` with `value` at the dotted `path` (objects created on the way). */
export function withValueAt(spec: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(spec);
  const parts = path.split('.');
  let node = copy;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    node = node[part] = next && typeof next === 'object' && !Array.isArray(next) ? (next as Record<string, unknown>) : {};
  }
  node[parts[parts.length - 1]] = structuredClone(value);
  return copy;
}

/** The value at a dotted path, undefined where any part is missing. */
export function valueAt(spec: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), spec);
}

const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
export const pointLabel = (point: Record<string, unknown>) => Object.entries(point).map(([path, value]) => `${path}=${shown(value)}`).join(', ') || 'base';

/** Problems of the grid's shape: paths, sizes and values. Empty when it is well formed. */
function gridProblems(grid: Grid): FieldError[] {
  const problems: FieldError[] = [];
  const paths = Object.keys(grid);
  if (paths.length === 0) problems.push({ field: 'grid', message: 'must name at least one spec path with its values' });
  if (paths.length > MAX_GRID_AXES) problems.push({ field: 'grid', message: `must have at most ${MAX_GRID_AXES} axes` });
  for (const path of paths) {
    const field = `grid.${path}`;
    const values = grid[path];
    if (!PATH.test(path) || !VARIABLE_ROOTS.has(path.split('.')[0])) {
      problems.push({ field, message: `is not a spec path: a dotted path under ${[...VARIABLE_ROOTS].join(', ')} (e.g. algorithm.id, training.learningRate)` });
    } else if (paths.some((other) => other !== path && path.startsWith(`${other}.`))) {
      problems.push({ field, message: 'lies inside another axis of the grid' });
    }
    if (!Array.isArray(values) || values.length === 0 || values.length > MAX_AXIS_VALUES) {
      problems.push({ field, message: `must be a list of 1 to ${MAX_AXIS_VALUES} values` });
      continue;
    }
    if (new Set(values.map(canonicalJson)).size !== values.length) problems.push({ field, message: 'lists a value twice' });
    if (path === SEED_PATH && !values.every((v) => Number.isInteger(v))) problems.push({ field, message: 'must list whole-number seeds' });
  }
  return problems;
}

/** Every combination of the axes' values, in the grid's order (the last axis varies fastest). */
function product(grid: Grid): Record<string, unknown>[] {
  return Object.entries(grid).reduce<Record<string, unknown>[]>((points, [path, values]) => points.flatMap((point) => values.map((value) => ({ ...point, [path]: value }))), [{}]);
}

/** The size of the grid without expanding it: the product of its axes' lengths. */
export function gridSize(grid: Grid): number {
  return Object.values(grid).reduce((n, values) => n * (Array.isArray(values) ? values.length : 0), 1);
}

/**
 * The cells and runs of `base` × `grid`, every run's spec checked (parseJobSpec) so that an
 * experiment is accepted whole or refused whole. Throws SpecValidationError naming the grid path,
 * or the run whose spec is invalid and the field.
 */
export function expandGrid(base: Record<string, unknown>, grid: Grid, name: string, served?: EnvDefinition): { cells: ExperimentCell[]; runs: ExperimentRun[] } {
  const shape = gridProblems(grid);
  if (shape.length > 0) throw new SpecValidationError(shape);
  const size = gridSize(grid);
  if (size > MAX_EXPERIMENT_RUNS) throw new SpecValidationError([{ field: 'grid', message: `makes ${size} runs; an experiment has at most ${MAX_EXPERIMENT_RUNS}` }]);
  const { [SEED_PATH]: seedValues, ...axes } = grid;
  const seeds = (seedValues as number[] | undefined) ?? [Number(valueAt(base, SEED_PATH) ?? 1)];
  const cells: ExperimentCell[] = product(axes).map((point, index) => ({ index, key: canonicalJson(point), point, label: pointLabel(point), seeds: [...seeds] }));
  const runs: ExperimentRun[] = [];
  const problems: FieldError[] = [];
  for (const cell of cells) {
    for (const seed of seeds) {
      const point: Record<string, unknown> = { ...cell.point, [SEED_PATH]: seed };
      const spec = Object.entries(point).reduce<Record<string, unknown>>((s, [path, value]) => withValueAt(s, path, value), { ...base, name: runName(name, cell.index, seed) });
      try {
        parseJobSpec(spec, served);
      } catch (error) {
        if (!(error instanceof SpecValidationError)) throw error;
        const where = `run ${runs.length + 1} (${pointLabel(point)})`;
        for (const e of error.errors) problems.push({ field: Object.keys(grid).some((path) => e.field === path || e.field.startsWith(`${path}.`)) ? `grid.${e.field}` : `base.${e.field}`, message: `${e.message} in ${where}` });
      }
      runs.push({ cell: cell.index, seed, point, spec });
    }
  }
  if (problems.length > 0) throw new SpecValidationError(problems.slice(0, 20));
  return { cells, runs };
}

/** A run's job name: the experiment's, its cell and seed (within the job name's pattern and length). */
export function runName(name: string, cell: number, seed: number): string {
  const suffix = `-c${cell + 1}-s${seed}`;
  return `${name.slice(0, 128 - suffix.length)}${suffix}`;
}
