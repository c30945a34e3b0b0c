import { Injectable } from '@nestjs/common';
import { PrismaService } from './prisma.service';

export interface WorkerAnnouncement {
  id: string;
  hostname: string;
  backend: string;
  device: 'gpu' | 'cpu';
  slots: number;
  running: number;
}

/** Worker heartbeats: who can run what, and who is still alive. */
@Injectable()
export class WorkerRepository {
  constructor(private readonly prisma: PrismaService) {}

  heartbeat(worker: WorkerAnnouncement) {
    const now = new Date();
    return this.prisma.worker.upsert({
      where: { id: worker.id },
      create: { ...worker, startedAt: now, lastHeartbeatAt: now },
      update: { backend: worker.backend, device: worker.device, slots: worker.slots, running: worker.running, lastHeartbeatAt: now },
    });
  }

  remove(id: string) {
    return this.prisma.worker.deleteMany({ where: { id } });
  }

  /** Workers heard from within `freshMs`. */
  alive(freshMs: number) {
    return this.prisma.worker.findMany({ where: { lastHeartbeatAt: { gte: new Date(Date.now() - freshMs) } }, orderBy: { id: 'asc' } });
  }
}
