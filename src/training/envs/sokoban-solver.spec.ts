import { moveSokoban, parseSokoban, isSolved } from './sokoban-rules';
import { solveSokoban } from './sokoban-solver';

describe('solveSokoban', () => {
  it('finds a shortest plan counted in single moves, walking around to push', () => {
    // Push the box right (1), walk below it (2), push it up twice (2): 1 + 2 + 2 moves. Pushing
    // up first costs 2 + 2 + 3 = 7.
    const room = parseSokoban(['######', '#__O_#', '#____#', '#PX__#', '#____#', '######']);
    const plan = solveSokoban(room, 20);
    expect(plan).toEqual(['Right', 'Down', 'Right', 'Up', 'Up']);
    let state = room;
    for (const action of plan!) state = moveSokoban(state, action).state;
    expect(isSolved(state)).toBe(true);
    expect(solveSokoban(room, 4)).toBeNull();
  });

  it('returns [] for a solved room and null when a box is stuck in a corner', () => {
    expect(solveSokoban(parseSokoban(['#####', '#P√_#', '#####']))).toEqual([]);
    expect(solveSokoban(parseSokoban(['#####', '#X__#', '#_P_#', '#__O#', '#####']))).toBeNull();
  });

  it('returns null when the optimum exceeds maxDepth', () => {
    const room = parseSokoban(['#######', '#PX__O#', '#######']);
    expect(solveSokoban(room, 3)).toEqual(['Right', 'Right', 'Right']);
    expect(solveSokoban(room, 2)).toBeNull();
  });
});
