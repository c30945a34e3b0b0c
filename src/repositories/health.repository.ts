import { Injectable } from '@nestjs/common';
import { PrismaService } from './prisma.service';

/** Cheap liveness probes of the database. */
@Injectable()
export class HealthRepository {
  constructor(private readonly prisma: PrismaService) {}

  async databaseReachable(): Promise<boolean> {
    try {
      await this.prisma.$queryRaw`SELECT 1`;
      return true;
    } catch {
      return false;
    }
  }
}
