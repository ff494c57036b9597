import { BadRequestException, Body, Controller, Post } from "@nestjs/common";
import { OrdersService } from "./orders.service.js";

@Controller("orders")
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Post()
  async create(@Body() body: { email?: unknown }): Promise<{ orderId: string; jobId: number }> {
    const placed = await this.orders.place(body?.email);
    if ("error" in placed) throw new BadRequestException(placed.error);
    return placed;
  }
}
