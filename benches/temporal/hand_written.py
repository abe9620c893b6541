"""The Temporal benchmarks written by hand with Temporal's Python SDK, for comparison with
the same workflows run by `atomic worker` (benches/temporal/run.sh runs both on one dev
server). Each agent step is an activity returning its prompt (W5: after 50 ms), as atomic's
`in-process` adapter does.

    python hand_written.py ADDRESS w1|w3|w5|w1-local|w3-local|w5-local [--workers N]

`w1-local`, `w3-local` and `w5-local` are the same workflows with each step a local activity,
as atomic runs a call to its `in-process` provider (one that only computes inside the worker).

Prints the wall time from start to result, in milliseconds. With `--workers N`, N - 1 more
worker processes poll the same task queue (`hand_written.py ADDRESS worker QUEUE`).
"""

import asyncio
import os
import sys
import time
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker

TIMEOUT = timedelta(minutes=10)


@activity.defn
async def agent(prompt: str) -> str:
    return prompt


@activity.defn
async def slow_agent(prompt: str) -> str:
    await asyncio.sleep(0.05)
    return prompt


@workflow.defn
class Chain:
    """W1: 1,000 agent steps, one after another."""

    @workflow.run
    async def run(self, steps: int) -> int:
        done = 0
        for i in range(steps):
            await workflow.execute_activity(agent, f"step {i}", start_to_close_timeout=TIMEOUT)
            done += 1
        return done


@workflow.defn
class Loop:
    """W3: a loop of an agent step and a state update, 1,000 rounds."""

    @workflow.run
    async def run(self, rounds: int) -> int:
        n = 0
        while n < rounds:
            await workflow.execute_activity(agent, f"round {n}", start_to_close_timeout=TIMEOUT)
            n += 1
        return n


@workflow.defn
class Fan:
    """W5: 200 agent steps of 50 ms, at most 16 at a time."""

    @workflow.run
    async def run(self, items: int) -> int:
        gate = asyncio.Semaphore(16)

        async def one(i: int) -> str:
            async with gate:
                return await workflow.execute_activity(
                    slow_agent, f"item {i}", start_to_close_timeout=TIMEOUT
                )

        results = await asyncio.gather(*(one(i) for i in range(items)))
        return len(results)


@workflow.defn
class ChainLocal:
    """W1 with local activities."""

    @workflow.run
    async def run(self, steps: int) -> int:
        done = 0
        for i in range(steps):
            await workflow.execute_local_activity(
                agent, f"step {i}", start_to_close_timeout=TIMEOUT
            )
            done += 1
        return done


@workflow.defn
class LoopLocal:
    """W3 with local activities."""

    @workflow.run
    async def run(self, rounds: int) -> int:
        n = 0
        while n < rounds:
            await workflow.execute_local_activity(
                agent, f"round {n}", start_to_close_timeout=TIMEOUT
            )
            n += 1
        return n


@workflow.defn
class FanLocal:
    """W5 with local activities: 200 agent steps of 50 ms, at most 16 at a time."""

    @workflow.run
    async def run(self, items: int) -> int:
        gate = asyncio.Semaphore(16)

        async def one(i: int) -> str:
            async with gate:
                return await workflow.execute_local_activity(
                    slow_agent, f"item {i}", start_to_close_timeout=TIMEOUT
                )

        results = await asyncio.gather(*(one(i) for i in range(items)))
        return len(results)


CASES = {
    "w1": (Chain, 1000),
    "w3": (Loop, 1000),
    "w5": (Fan, 200),
    "w1-local": (ChainLocal, 1000),
    "w3-local": (LoopLocal, 1000),
    "w5-local": (FanLocal, 200),
}


def worker(client: Client, queue: str) -> Worker:
    return Worker(
        client,
        task_queue=queue,
        workflows=[Chain, Loop, Fan, ChainLocal, LoopLocal, FanLocal],
        activities=[agent, slow_agent],
        max_concurrent_activities=100,
    )


async def main() -> None:
    address, case = sys.argv[1], sys.argv[2]
    client = await Client.connect(address)
    if case == "worker":
        await worker(client, sys.argv[3]).run()
        return
    workers = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--workers" else 1
    flow, size = CASES[case]
    queue = f"py-{case}-{time.time_ns()}"
    extra = [
        await asyncio.create_subprocess_exec(sys.executable, __file__, address, "worker", queue)
        for _ in range(workers - 1)
    ]
    async with worker(client, queue):
        # Let the other workers start polling.
        await asyncio.sleep(2 if extra else 0)
        begin = time.perf_counter()
        await client.execute_workflow(flow.run, size, id=queue, task_queue=queue)
        print(f"{(time.perf_counter() - begin) * 1000:.0f}")
    for process in extra:
        process.kill()
        await process.wait()


if __name__ == "__main__":
    asyncio.run(main())
    sys.stdout.flush()
    # The SDK's native core can abort while the interpreter finalizes (seen with 1.35.0);
    # the measurement is printed, so leave without finalizing.
    os._exit(0)
