/**
 * @module mcp/prompts
 * Prompts that help an agent use the gateway well: generate a video and wait for it, pick a
 * model for a task within a budget, estimate what a workload costs. Arguments are strings, as
 * the protocol wants; each prompt is a user message naming the tools and resources to use.
 */
export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}

export interface GatewayPrompt {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  text(args: Record<string, string>): string;
}

export const PROMPTS: GatewayPrompt[] = [
  {
    name: "generate_video_and_wait",
    title: "Generate a video and wait for it",
    description: "Quote, start a video task and wait for the finished video.",
    arguments: [
      { name: "idea", description: "What the video should show.", required: true },
      { name: "model", description: "A video model id (default: the cheapest).", required: false },
      { name: "duration", description: "Seconds of video (default 5).", required: false },
    ],
    text: (args) =>
      [
        `Make a video of: ${args.idea}.`,
        args.model
          ? `Use the model ${args.model}.`
          : "Pick the cheapest available video model from list_models (kind: video).",
        `Duration: ${args.duration ?? "5"} seconds.`,
        "First call quote with the request to see the price and check get_balance covers it.",
        "Then call generate_video with wait: true (and a wait_seconds that suits you); if the task is still running when it returns, call get_video_task with its id until its status is final.",
        "Report the video URL, the seconds billed and the cost in USD (cost_micros / 1,000,000).",
      ].join("\n"),
  },
  {
    name: "pick_model",
    title: "Pick a model",
    description: "Choose the model that fits a task and a budget.",
    arguments: [
      { name: "task", description: "What the model must do.", required: true },
      { name: "budget_usd", description: "Most to spend per request, in USD.", required: false },
    ],
    text: (args) =>
      [
        `Task: ${args.task}.`,
        args.budget_usd ? `Budget per request: ${args.budget_usd} USD.` : "",
        "Read switchyard://catalog for the models this key may use and switchyard://pricing for their prices (µUSD; each key names its unit).",
        "Only consider models whose available is true. Use quote on a representative request for the two best candidates, then recommend one and say why.",
      ]
        .filter(Boolean)
        .join("\n"),
  },
  {
    name: "estimate_cost",
    title: "Estimate a workload's cost",
    description: "Estimate what a number of requests of one kind cost.",
    arguments: [
      { name: "model", description: "The model id.", required: true },
      {
        name: "workload",
        description: "The requests, e.g. '1,000 chats of 500 words'.",
        required: true,
      },
    ],
    text: (args) =>
      [
        `Estimate the cost of this workload on ${args.model}: ${args.workload}.`,
        "Build one representative request body and call quote with it; max_cost_micros is the most one request can cost (output at its cap).",
        "Multiply by the number of requests, state the assumption about output length, and give the total in USD.",
      ].join("\n"),
  },
];
