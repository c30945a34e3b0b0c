import type { Principal } from './auth.service';
import { Forbidden } from './errors';

/**
 * Who may do what. Another user's resource is reported as missing (404), never as forbidden,
 * so its existence is not disclosed. Admin-only operations answer 403: those on no particular
 * resource check the role before looking anything up; those on a job (preempt) first check
 * that the caller may read it, so a member is told "admins only" about a job they can see and
 * "not found" about one they cannot.
 */

interface OwnedJob {
  ownerId: string;
  owner: { teamId: string | null };
}

/** Admins read everything; members their own jobs, and team-mates' where the team shares jobs. */
export function canRead(principal: Principal, job: OwnedJob): boolean {
  if (principal.role === 'admin' || job.ownerId === principal.userId) return true;
  return principal.teamSharesJobs && principal.teamId !== null && job.owner.teamId === principal.teamId;
}

/** Only the owner and admins change a job; team-mates never do, whatever the team shares. */
export function canControl(principal: Principal, job: OwnedJob): boolean {
  return principal.role === 'admin' || job.ownerId === principal.userId;
}

/** A user's profile and API keys: admins and the user themself. */
export function canSeeUser(principal: Principal, userId: string): boolean {
  return principal.role === 'admin' || principal.userId === userId;
}

/** Admin-only operations (managing users and teams). */
export function requireAdmin(principal: Principal, action: string): void {
  if (principal.role !== 'admin') throw new Forbidden(`only admins ${action}`);
}
