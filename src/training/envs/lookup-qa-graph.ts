import type { Rng } from '../random';

/**
 * Invented entity names. Every seed's graph draws from this one pool, so one vocabulary serves
 * every seed, and no name means anything outside the episode (no real-world knowledge helps).
 * No name is a prefix of another, so longest-match tokenization and argument matching agree.
 */
export const ENTITY_POOL: readonly string[] = [
  'Zorvek', 'Quillan', 'Brask', 'Tesmer', 'Velka', 'Oruth', 'Pellam', 'Ixora',
  'Durnik', 'Savrel', 'Mordra', 'Kelvas', 'Yssen', 'Talvo', 'Grendo', 'Wexley',
  'Fenrik', 'Ulmara', 'Corvin', 'Hestra', 'Jorund', 'Nivak', 'Plosk', 'Rumel',
  'Skarn', 'Thibble', 'Vossa', 'Xandor', 'Yorrik', 'Zephra', 'Almuk', 'Belto',
];

/** Relation words. Each entity has at most one fact per relation, so every question has one answer. */
export const RELATION_POOL: readonly string[] = ['rival', 'mentor', 'ally', 'maker', 'keeper', 'heir'];

/** One fact `subject relation object`, e.g. Zorvek's rival is Brask. */
export interface Fact {
  readonly relation: string;
  readonly object: string;
}

/**
 * A question `r_h of … of r_1 of e_0 ?`: start at `chain[0]`, follow `relations[i]` from
 * `chain[i]` to `chain[i + 1]`; the answer is the last entity of the chain.
 */
export interface Question {
  readonly relations: readonly string[];
  /** hops + 1 distinct entities, the start first and the answer last. */
  readonly chain: readonly string[];
}

/** A seed's world: entity → its facts (in a fixed order), and the question asked about it. */
export interface LookupGraph {
  readonly facts: ReadonlyMap<string, readonly Fact[]>;
  readonly question: Question;
}

export interface GraphShape {
  /** Entities in the graph (drawn from `ENTITY_POOL`). */
  entities: number;
  /** Facts per entity. */
  factsPerEntity: number;
  minHops: number;
  maxHops: number;
}

/** A walk of distinct entities is found within a few tries on any allowed shape; the caps only turn a bug into an error. */
const MAX_WALKS = 200;
const MAX_GRAPHS = 1000;

/**
 * Draws a graph and a question from `rng`: `entities` names from the pool, each with
 * `factsPerEntity` facts over distinct relations pointing at other entities, then a hop count
 * uniform in [minHops, maxHops] and a walk of that many facts through distinct entities (so the
 * answer is never the start or an entity met on the way). A graph that admits no such walk
 * (possible when it is tiny and sparse) is drawn again.
 */
export function generateLookupGraph(shape: GraphShape, rng: Rng): LookupGraph {
  const hops = shape.minHops + rng.int(shape.maxHops - shape.minHops + 1);
  for (let graph = 0; graph < MAX_GRAPHS; graph++) {
    const names = rng.shuffle(ENTITY_POOL).slice(0, shape.entities);
    const facts = new Map<string, Fact[]>();
    for (const subject of names) {
      const others = names.filter((name) => name !== subject);
      const relations = rng.shuffle(RELATION_POOL).slice(0, shape.factsPerEntity);
      facts.set(subject, relations.map((relation) => ({ relation, object: rng.pick(others) })));
    }
    for (let walk = 0; walk < MAX_WALKS; walk++) {
      const question = randomWalk(facts, rng.pick(names), hops, rng);
      if (question) return { facts, question };
    }
  }
  throw new Error(`lookup-qa: no ${hops}-hop question in ${MAX_GRAPHS} graphs of ${shape.entities} entities`);
}

function randomWalk(facts: ReadonlyMap<string, readonly Fact[]>, start: string, hops: number, rng: Rng): Question | null {
  const chain = [start];
  const relations: string[] = [];
  for (let hop = 0; hop < hops; hop++) {
    const fresh = facts.get(chain[hop])!.filter((fact) => !chain.includes(fact.object));
    if (fresh.length === 0) return null;
    const fact = rng.pick(fresh);
    relations.push(fact.relation);
    chain.push(fact.object);
  }
  return { relations, chain };
}

/** Follows `relations` from `start` through the graph: the entity reached, or null where a fact is missing. */
export function followRelations(facts: ReadonlyMap<string, readonly Fact[]>, start: string, relations: readonly string[]): string | null {
  let at: string | undefined = start;
  for (const relation of relations) {
    at = facts.get(at)?.find((fact) => fact.relation === relation)?.object;
    if (at === undefined) return null;
  }
  return at;
}
