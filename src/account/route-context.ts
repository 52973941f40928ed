import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Frame } from './html.js';
import type { Permission } from './roles.js';
import type { AccountPagesDeps } from './routes.js';
import type { Session } from './sessions.js';
import type { Team, Viewer } from './team.js';
import type { TeamView } from './team-view.js';

// What the signed-in dashboard's route modules are given by routes.ts (which owns sessions and the page).

/** What a dashboard answer may carry besides the page: an error, or a key or a link shown once. */
export interface DashboardExtra {
  error?: string;
  newKey?: { key: string; name: string | null; memberName?: string | undefined };
  newInvite?: TeamView['newInvite'];
}

export interface SignedInContext {
  d: AccountPagesDeps;
  team: Team;
  form: RequestHandler;
  /** A live session (else to sign-in), its member still a member, and for POSTs its CSRF token. */
  signedIn: (req: Request, res: Response, next: NextFunction) => Promise<void>;
  /** Only the roles with this permission pass (./roles.ts). */
  allow: (p: Permission) => RequestHandler;
  /** The 403 page a role gets for what it may not do. */
  forbid: (res: Response) => void;
  viewer: (res: Response) => Viewer;
  /** The session: the key it signed in with, if any. */
  session: (res: Response) => Session;
  /** The CSRF token of the session's forms. */
  csrf: (s: Session) => string;
  dashboard: (req: Request, res: Response, status?: number, extra?: DashboardExtra) => Promise<void>;
  send: (res: Response, status: number, f: Frame) => void;
  go: (res: Response, path: string) => void;
}
