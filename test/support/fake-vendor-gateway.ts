/**
 * A test gateway whose catalog routes to one fake vendor (test/support/fake-vendor.ts), for
 * tests that script a vendor's answers byte for byte.
 */
import { type FakeVendor, startFakeVendor } from "./fake-vendor.ts";
import { startTestGateway, type TestGateway } from "./gateway-harness.ts";

export interface FakeVendorGateway {
  gateway: TestGateway;
  vendor: FakeVendor;
  close(): Promise<void>;
}

/** Starts the vendor, then a gateway whose catalog is `models(vendor.url)`. */
export async function startFakeVendorGateway(
  models: (vendorUrl: string) => unknown[],
): Promise<FakeVendorGateway> {
  const vendor = await startFakeVendor();
  const gateway = await startTestGateway({
    config: { catalog: { models: models(vendor.url) } },
  }).catch(async (error: unknown) => {
    await vendor.close();
    throw error;
  });
  return {
    gateway,
    vendor,
    close: async () => {
      await gateway.close();
      await vendor.close();
    },
  };
}
